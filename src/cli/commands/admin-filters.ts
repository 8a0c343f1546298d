// The search filters of `durable-mcp admin tasks list` and of the bulk changes: their flags, help and query string.
import { TASK_OUTCOMES, TASK_STATUSES } from '../../tasks/task.js';
import { ERROR_OUTCOME_PATTERN } from '../../tasks/error-outcome.js';
import { UsageError } from '../args.js';

export const filtersHelp = `  --tenant T  --principal P  --tool NAME  --tool-version V
  --status S1,S2             any of ${TASK_STATUSES.join(', ')}
  --outcome O1,O2            finished tasks that ended in any of ${TASK_OUTCOMES.join(', ')}
                             (tool_error: completed with a tool error; retry those and failed ones)
  --created-from X  --created-to X  --updated-from X  --updated-to X
                             an ISO 8601 time (2026-01-31T12:00:00Z) or ms since the epoch; ranges are [from, to)
  --has-error | --no-error   only tasks with an error (failed, or a tool error), or only tasks without one
  --error-text S             a case-insensitive part of the error message (or of a tool error's text)
  --error-outcome W          failed tasks whose error data gives this outcome word; --error-outcome unknown:
                             the gateway's calls the upstream may or may not have done (check, then retry
                             or record the outcome: admin tasks retry ID --record-step upstream --value …)`;

export const FILTER_FLAGS = {
  tenant: { type: 'string' },
  principal: { type: 'string' },
  tool: { type: 'string' },
  'tool-version': { type: 'string' },
  status: { type: 'string' },
  outcome: { type: 'string' },
  'created-from': { type: 'string' },
  'created-to': { type: 'string' },
  'updated-from': { type: 'string' },
  'updated-to': { type: 'string' },
  'has-error': { type: 'boolean' },
  'no-error': { type: 'boolean' },
  'error-text': { type: 'string' },
  'error-outcome': { type: 'string' },
} as const;

const TIME_RANGES = [
  ['created-from', 'createdFrom', 'created-to', 'createdTo'],
  ['updated-from', 'updatedFrom', 'updated-to', 'updatedTo'],
] as const;

export type Values = Record<string, string | boolean | undefined>;

/** A time flag as ms since the epoch: digits are ms, anything else must be an ISO 8601 date or time. */
function timeFlag(values: Values, name: string): number | undefined {
  const value = values[name];
  if (typeof value !== 'string') return undefined;
  const ms = /^\d+$/.test(value)
    ? Number(value)
    : /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.test(value)
      ? Date.parse(value)
      : NaN;
  if (!Number.isSafeInteger(ms))
    throw new UsageError(
      `--${name} must be an ISO 8601 time (2026-01-31T12:00:00Z) or ms since the epoch (got "${value}")`,
    );
  return ms;
}

export function oneOf(values: Values, name: string, allowed: readonly string[]): string | undefined {
  const value = values[name] as string | undefined;
  if (value !== undefined && !allowed.includes(value))
    throw new UsageError(`--${name} must be ${allowed.join(' or ')} (got "${value}")`);
  return value;
}

/** A comma list of words each of which is `allowed` (--status, --outcome). */
function listFlag(values: Values, name: string, allowed: readonly string[]): string | undefined {
  if (values[name] === undefined) return undefined;
  const words = String(values[name]).split(',');
  for (const w of words)
    if (!allowed.includes(w))
      throw new UsageError(`--${name}: unknown ${name} "${w}" (one or more of ${allowed.join(', ')})`);
  return words.join(',');
}

/** The query string of the search's filters; every flag checked. */
export function filterQuery(values: Values): URLSearchParams {
  const q = new URLSearchParams();
  const put = (key: string, value: string | number | undefined): void => {
    if (value !== undefined) q.set(key, String(value));
  };
  put('tenant', values.tenant as string | undefined);
  put('principal', values.principal as string | undefined);
  put('tool', values.tool as string | undefined);
  put('toolVersion', values['tool-version'] as string | undefined);
  put('status', listFlag(values, 'status', TASK_STATUSES));
  put('outcome', listFlag(values, 'outcome', TASK_OUTCOMES));
  for (const [fromFlag, fromKey, toFlag, toKey] of TIME_RANGES) {
    const [from, to] = [timeFlag(values, fromFlag), timeFlag(values, toFlag)];
    if (from !== undefined && to !== undefined && from >= to)
      throw new UsageError(`--${fromFlag} must be before --${toFlag}`);
    put(fromKey, from === undefined ? undefined : new Date(from).toISOString());
    put(toKey, to === undefined ? undefined : new Date(to).toISOString());
  }
  if (values['has-error'] === true && values['no-error'] === true)
    throw new UsageError('--has-error and --no-error exclude each other');
  if (values['has-error'] === true || values['no-error'] === true)
    put('hasError', values['has-error'] === true ? 'true' : 'false');
  put('errorText', values['error-text'] as string | undefined);
  const word = values['error-outcome'] as string | undefined;
  if (word !== undefined && !ERROR_OUTCOME_PATTERN.test(word))
    throw new UsageError(
      `--error-outcome is a word such as unknown (a-z, then a-z, 0-9 or _) (got "${word}")`,
    );
  put('errorOutcome', word);
  return q;
}
