// `durable-mcp admin tasks list`: search every owner's tasks through the operator API, one page or (--all) every one.
import type { TaskPageJson } from '../../admin/shapes.js';
import { TASK_OUTCOMES, TASK_STATUSES } from '../../tasks/task.js';
import { ERROR_OUTCOME_PATTERN } from '../../tasks/error-outcome.js';
import { adminApiFromFlags, AdminTransportError, type AdminApi, type Answer } from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { taskTable } from '../admin-view.js';
import { intFlag, parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, EXIT, jsonOutput } from '../client-flags.js';
import { oneLine, printJson, printOut } from '../terminal-text.js';

export const listUsage = `durable-mcp admin tasks list [filters] [flags]   (operators: every owner's tasks in your tenants)
  --tenant T  --principal P  --tool NAME  --tool-version V
  --status S1,S2             any of ${TASK_STATUSES.join(', ')}
  --outcome O1,O2            finished tasks that ended in any of ${TASK_OUTCOMES.join(', ')}
                             (tool_error: completed with a tool error; retry those and failed ones)
  --created-from X  --created-to X  --updated-from X  --updated-to X
                             an ISO 8601 time (2026-01-31T12:00:00Z) or ms since the epoch; ranges are [from, to)
  --has-error | --no-error   only tasks with an error (failed, or a tool error), or only tasks without one
  --error-text S             a case-insensitive part of the error message (or of a tool error's text)
  --error-outcome W          failed tasks whose error data gives this outcome word; --error-outcome unknown:
                             the gateway's calls the upstream may or may not have done (check, then retry
                             or record the outcome: admin tasks retry ID --record-step upstream --value …)
  --sort created|updated     (default created)    --order asc|desc   (default desc: newest first)
  --limit N                  tasks per page, 1–500 (default: the server's)
  --cursor C                 the next page, as the previous one printed it
  --all [--max N]            follow the cursors to the end, at most N tasks (default 10000); one JSON object
${clientFlagsHelp}`;

const LIST_FLAGS = {
  ...CLIENT_FLAGS,
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
  sort: { type: 'string' },
  order: { type: 'string' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  all: { type: 'boolean' },
  max: { type: 'string' },
} as const;

const MAX_PAGE = 500;
const TIME_RANGES = [
  ['created-from', 'createdFrom', 'created-to', 'createdTo'],
  ['updated-from', 'updatedFrom', 'updated-to', 'updatedTo'],
] as const;

type Values = Record<string, string | boolean | undefined>;

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

function oneOf(values: Values, name: string, allowed: readonly string[]): string | undefined {
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

/** The query string of the search (without limit and cursor); every flag checked. */
function searchQuery(values: Values): URLSearchParams {
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
  put('sort', oneOf(values, 'sort', ['created', 'updated']));
  put('order', oneOf(values, 'order', ['asc', 'desc']));
  return q;
}

function asPage(body: unknown): TaskPageJson {
  const page = body as Answer<TaskPageJson>;
  if (!Array.isArray(page.items) || (page.next !== undefined && typeof page.next !== 'string'))
    throw new AdminTransportError('the answer to GET /tasks is not a page of tasks');
  return page as TaskPageJson;
}

/** Follows the cursors from `cursor` until the last page or `max` tasks; `next` is set when `max` stopped it. */
async function collect(
  api: AdminApi,
  query: URLSearchParams,
  pageSize: number,
  max: number,
  cursor: string | undefined,
): Promise<TaskPageJson> {
  const items: TaskPageJson['items'] = [];
  for (;;) {
    const q = new URLSearchParams(query);
    q.set('limit', String(Math.min(pageSize, max - items.length)));
    if (cursor !== undefined) q.set('cursor', cursor);
    const page = asPage(await api.get('/tasks', q));
    items.push(...page.items);
    if (page.next === undefined) return { items };
    if (items.length >= max) return { items, next: page.next };
    if (page.next === cursor) throw new AdminTransportError('the server answered the same cursor twice');
    cursor = page.next;
  }
}

export async function listTasks(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, LIST_FLAGS, true);
  if (positionals.length > 2) throw new UsageError(`unexpected "${positionals[2]}"\n\n${listUsage}`);
  const json = jsonOutput(values);
  const query = searchQuery(values);
  const limit = values.limit === undefined ? undefined : intFlag(values.limit, 'limit', 0, 1);
  if (limit !== undefined && limit > MAX_PAGE) throw new UsageError(`--limit must be at most ${MAX_PAGE}`);
  if (values.max !== undefined && values.all !== true) throw new UsageError('--max goes with --all');
  const max = intFlag(values.max, 'max', 10_000, 1);
  const cursor = values.cursor as string | undefined;
  const api = adminApiFromFlags(values);
  try {
    let page: TaskPageJson;
    if (values.all === true) page = await collect(api, query, limit ?? MAX_PAGE, max, cursor);
    else {
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor !== undefined) query.set('cursor', cursor);
      const body = await api.get('/tasks', query);
      page = asPage(body);
    }
    if (json) printJson(page);
    else {
      printOut(taskTable(page.items));
      if (page.next !== undefined)
        printOut(
          oneLine`${values.all === true ? `stopped at --max ${max}; ` : ''}next page: --cursor ${page.next}`,
        );
    }
    return EXIT.ok;
  } catch (err) {
    return reportAdminError(err, api.base);
  }
}
