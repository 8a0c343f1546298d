// The query strings of the operator API, checked: a task search and the overview's windows. Every mistake is a
// reason for a 400, never a throw.
import type { AdminTaskFilter, AdminTaskQuery } from '../tasks/admin.js';
import { ERROR_OUTCOME_PATTERN } from '../tasks/error-outcome.js';
import { TASK_OUTCOMES, TASK_STATUSES, type TaskOutcome, type TaskStatus } from '../tasks/task.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const TEXT_FILTERS = ['tenant', 'principal', 'tool', 'toolVersion', 'errorText', 'errorOutcome'] as const;
const TIME_FILTERS = ['createdFrom', 'createdTo', 'updatedFrom', 'updatedTo'] as const;
const LIST_PARAMS = [
  ...TEXT_FILTERS,
  ...TIME_FILTERS,
  'status',
  'outcome',
  'hasError',
  'sort',
  'order',
  'limit',
  'cursor',
];

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 500;
/** Overview defaults: windows of 1 h and 24 h, tasks unchanged for 15 min count as stuck. */
export const DEFAULT_WINDOWS_MS: readonly number[] = [3_600_000, 86_400_000];
export const DEFAULT_STUCK_MS = 900_000;
const MAX_WINDOWS = 10;

/** Each parameter once, and only those named: a misspelt filter must not widen a search unnoticed. */
function single(params: URLSearchParams, known: readonly string[]): Parsed<Map<string, string>> {
  const values = new Map<string, string>();
  for (const [name, value] of params) {
    if (!known.includes(name)) return { ok: false, reason: `unknown parameter ${JSON.stringify(name)}` };
    if (values.has(name)) return { ok: false, reason: `${name} is given more than once` };
    values.set(name, value);
  }
  return { ok: true, value: values };
}

/** A time: integer ms since the epoch, or an ISO 8601 date or date-time. */
export function parseTime(text: string): number | undefined {
  if (/^\d{1,15}$/.test(text)) return Number(text);
  if (!/^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/i.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

/** A whole number within [min, max], written in decimal digits. */
function integer(text: string, min: number, max: number): number | undefined {
  if (!/^\d{1,15}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= min && n <= max ? n : undefined;
}

/** A comma list of `name`s (status, outcome), each one of `words`; repeats are dropped. */
function wordList<T extends string>(name: string, text: string, words: readonly T[]): Parsed<T[]> {
  const list = text.split(',').map((s) => s.trim());
  const unknown = list.find((s) => !(words as readonly string[]).includes(s));
  if (unknown !== undefined)
    return {
      ok: false,
      reason: `${name}: unknown ${name} ${JSON.stringify(unknown)} (${words.join(', ')})`,
    };
  return { ok: true, value: [...new Set(list as T[])] };
}

/** One of a few words, or a reason. */
function oneOf<T extends string>(name: string, text: string, words: readonly T[]): Parsed<T> {
  return (words as readonly string[]).includes(text)
    ? { ok: true, value: text as T }
    : { ok: false, reason: `${name} must be ${words.join(' or ')}` };
}

/** `GET …/tasks`: the filters, order and page of a search. */
export function parseTaskQuery(params: URLSearchParams): Parsed<AdminTaskQuery> {
  const given = single(params, LIST_PARAMS);
  if (!given.ok) return given;
  const values = given.value;
  const query: AdminTaskQuery = { limit: DEFAULT_LIMIT };
  for (const name of TEXT_FILTERS) {
    const v = values.get(name);
    if (v === undefined) continue;
    if (v === '' || v.length > 256) return { ok: false, reason: `${name} must be 1–256 characters` };
    if (name === 'errorOutcome' && !ERROR_OUTCOME_PATTERN.test(v))
      return { ok: false, reason: 'errorOutcome must be a word: a-z, then a-z, 0-9 or _ (at most 32)' };
    query[name] = v;
  }
  for (const name of TIME_FILTERS) {
    const v = values.get(name);
    if (v === undefined) continue;
    const ms = parseTime(v);
    if (ms === undefined)
      return { ok: false, reason: `${name} must be an ISO 8601 time or ms since the epoch` };
    query[name] = ms;
  }
  return parseListRest(values, query);
}

/** The rest of a search: status, outcome, hasError, order and page. */
function parseListRest(values: Map<string, string>, query: AdminTaskQuery): Parsed<AdminTaskQuery> {
  const status = values.get('status');
  if (status !== undefined) {
    const list = wordList<TaskStatus>('status', status, TASK_STATUSES);
    if (!list.ok) return list;
    query.status = list.value;
  }
  const outcome = values.get('outcome');
  if (outcome !== undefined) {
    const list = wordList<TaskOutcome>('outcome', outcome, TASK_OUTCOMES);
    if (!list.ok) return list;
    query.outcome = list.value;
  }
  const hasError = values.get('hasError');
  if (hasError !== undefined) {
    const word = oneOf('hasError', hasError, ['true', 'false']);
    if (!word.ok) return word;
    query.hasError = word.value === 'true';
  }
  const sort = values.get('sort');
  if (sort !== undefined) {
    const word = oneOf('sort', sort, ['created', 'updated']);
    if (!word.ok) return word;
    query.sort = word.value;
  }
  const order = values.get('order');
  if (order !== undefined) {
    const word = oneOf('order', order, ['asc', 'desc']);
    if (!word.ok) return word;
    query.order = word.value;
  }
  const limit = values.get('limit');
  if (limit !== undefined) {
    const n = integer(limit, 1, MAX_LIMIT);
    if (n === undefined) return { ok: false, reason: `limit must be an integer from 1 to ${MAX_LIMIT}` };
    query.limit = n;
  }
  const cursor = values.get('cursor');
  if (cursor !== undefined) query.cursor = cursor;
  return { ok: true, value: query };
}

/** A bulk change: the filters of a search (no order, page or cursor) and whether it is a dry run. */
export interface BulkQuery {
  filter: AdminTaskFilter;
  dryRun: boolean;
}

/** `POST …/bulk/{action}`: the filters of `GET …/tasks`, and `dryRun=true` to count without changing anything. */
export function parseBulkQuery(params: URLSearchParams): Parsed<BulkQuery> {
  const rest = new URLSearchParams();
  let dryRun: string | undefined;
  for (const [name, value] of params) {
    if (['sort', 'order', 'limit', 'cursor'].includes(name))
      return { ok: false, reason: `${name} is not a filter: a bulk change takes every matching task` };
    if (name !== 'dryRun') rest.append(name, value);
    else if (dryRun !== undefined) return { ok: false, reason: 'dryRun is given more than once' };
    else dryRun = value;
  }
  const word = dryRun === undefined ? undefined : oneOf('dryRun', dryRun, ['true', 'false']);
  if (word !== undefined && !word.ok) return word;
  const query = parseTaskQuery(rest);
  if (!query.ok) return query;
  const { limit: _limit, ...filter } = query.value;
  return { ok: true, value: { filter, dryRun: word?.value === 'true' } };
}

export interface OverviewQuery {
  windowsMs: number[];
  stuckMs: number;
}

/** `GET …/overview`: `windows` (a comma list of ms, at most 10) and `stuckMs`, each a positive integer. */
export function parseOverviewQuery(params: URLSearchParams): Parsed<OverviewQuery> {
  const given = single(params, ['windows', 'stuckMs']);
  if (!given.ok) return given;
  const windows = given.value.get('windows');
  const stuck = given.value.get('stuckMs');
  let windowsMs = [...DEFAULT_WINDOWS_MS];
  if (windows !== undefined) {
    const list = windows.split(',').map((w) => integer(w.trim(), 1, Number.MAX_SAFE_INTEGER));
    if (list.length > MAX_WINDOWS || list.some((w) => w === undefined))
      return {
        ok: false,
        reason: `windows must be 1 to ${MAX_WINDOWS} positive integers (ms), comma-separated`,
      };
    windowsMs = list as number[];
  }
  const stuckMs = stuck === undefined ? DEFAULT_STUCK_MS : integer(stuck, 1, Number.MAX_SAFE_INTEGER);
  if (stuckMs === undefined) return { ok: false, reason: 'stuckMs must be a positive integer (ms)' };
  return { ok: true, value: { windowsMs, stuckMs } };
}
