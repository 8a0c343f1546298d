// What both stores' operator port (TaskAdmin) shares: the checks of a search, its opaque keyset cursor, the tenant
// scope, and the WHERE clause of a search written once for both SQL dialects.
import {
  AdminQueryError,
  inAdminScope,
  type AdminActionResult,
  type AdminOverview,
  type AdminScope,
  type AdminTaskFilter,
  type AdminTaskPage,
  type AdminTaskQuery,
  type AdminTaskSummary,
} from '../tasks/admin.js';
import type { CancelResult } from '../tasks/store.js';
import {
  outcomeOf,
  TASK_OUTCOMES,
  TASK_STATUSES,
  type TaskError,
  type TaskOutcome,
  type TaskStatus,
} from '../tasks/task.js';
import { ERROR_OUTCOME_PATTERN } from '../tasks/error-outcome.js';
import { openColumn, type Opener } from './payload-sealing.js';
import { toTaskHead, type TaskHeadColumns } from './task-head.js';

export const ADMIN_MAX_LIMIT = 500;

export type AdminSort = 'created' | 'updated';
export type AdminOrder = 'asc' | 'desc';

/** A search the store can run: its limits checked, its cursor opened. */
export interface CheckedQuery {
  filter: AdminTaskFilter;
  sort: AdminSort;
  order: AdminOrder;
  limit: number;
  /** The last row of the previous page. */
  after?: { t: number; id: string };
}

export { inAdminScope };

/**
 * The tenants a search may read: undefined for any, else a list (empty: nothing is visible). A tenant filter
 * narrows the scope; it never widens it.
 */
export function visibleTenants(scope: AdminScope, tenant?: string): readonly string[] | undefined {
  if (tenant !== undefined) return inAdminScope(scope, tenant) ? [tenant] : [];
  return scope.tenants === 'all' ? undefined : [...new Set(scope.tenants)];
}

interface CursorBody {
  s: AdminSort;
  o: AdminOrder;
  t: number;
  id: string;
}

/** The opaque cursor after the row (`t`, `id`) of a page in this sort and order: base64url JSON. */
export const encodeAdminCursor = (sort: AdminSort, order: AdminOrder, t: number, id: string): string =>
  Buffer.from(JSON.stringify({ s: sort, o: order, t, id } satisfies CursorBody)).toString('base64url');

function decodeCursor(cursor: string, sort: AdminSort, order: AdminOrder): { t: number; id: string } {
  let body: Partial<CursorBody> | undefined;
  try {
    if (!/^[A-Za-z0-9_-]{1,1024}$/.test(cursor)) throw new Error('not base64url');
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    throw new AdminQueryError('malformed cursor');
  }
  if (
    typeof body !== 'object' ||
    body === null ||
    typeof body.t !== 'number' ||
    !Number.isSafeInteger(body.t) ||
    typeof body.id !== 'string'
  )
    throw new AdminQueryError('malformed cursor');
  if (body.s !== sort || body.o !== order)
    throw new AdminQueryError('the cursor belongs to a search in another sort or order');
  return { t: body.t, id: body.id };
}

const isTime = (v: unknown): boolean => v === undefined || (typeof v === 'number' && Number.isFinite(v));

/** Checks a search (limit, sort, order, statuses, times, cursor); throws AdminQueryError. */
export function checkAdminQuery(query: AdminTaskQuery): CheckedQuery {
  const { sort = 'created', order = 'desc', limit, cursor, ...filter } = query;
  if (!Number.isInteger(limit) || limit < 1 || limit > ADMIN_MAX_LIMIT)
    throw new AdminQueryError(`limit must be an integer from 1 to ${ADMIN_MAX_LIMIT}`);
  if (sort !== 'created' && sort !== 'updated') throw new AdminQueryError('sort must be created or updated');
  if (order !== 'asc' && order !== 'desc') throw new AdminQueryError('order must be asc or desc');
  checkAdminFilter(filter);
  const checked: CheckedQuery = { filter, sort, order, limit };
  if (cursor !== undefined) checked.after = decodeCursor(cursor, sort, order);
  return checked;
}

/** Checks a search's filters (statuses, outcomes, times); throws AdminQueryError. */
export function checkAdminFilter(filter: AdminTaskFilter): void {
  for (const s of filter.status ?? [])
    if (!TASK_STATUSES.includes(s)) throw new AdminQueryError(`unknown status: ${String(s)}`);
  for (const o of filter.outcome ?? [])
    if (!TASK_OUTCOMES.includes(o)) throw new AdminQueryError(`unknown outcome: ${String(o)}`);
  if (filter.errorOutcome !== undefined && !ERROR_OUTCOME_PATTERN.test(filter.errorOutcome))
    throw new AdminQueryError('errorOutcome must be a word: a-z, then a-z, 0-9 or _, at most 32');
  for (const key of ['createdFrom', 'createdTo', 'updatedFrom', 'updatedTo'] as const)
    if (!isTime(filter[key])) throw new AdminQueryError(`${key} must be a time in ms`);
}

/** The greatest count TaskAdmin.count is asked for (it counts no further). */
export const ADMIN_MAX_COUNT = 1_000_000;

/**
 * The statement and parameters counting the tasks of `table` within `tenants` (undefined: any) that match the
 * filter, at most `max` of them (the search's conditions, without its order); undefined when nothing can match.
 */
export function adminCountSql(
  d: AdminDialect,
  table: string,
  tenants: readonly string[] | undefined,
  filter: AdminTaskFilter,
  max: number,
): { sql: string; params: unknown[] } | undefined {
  if (!Number.isSafeInteger(max) || max < 0 || max > ADMIN_MAX_COUNT)
    throw new AdminQueryError(`a count goes up to ${ADMIN_MAX_COUNT}`);
  const params: unknown[] = [];
  const conditions = adminConditions(d, tenants, filter, params);
  if (conditions === undefined || max === 0) return undefined;
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
  const limit = d.param(params, max);
  return {
    sql: `SELECT count(*) AS n FROM (SELECT 1 FROM ${table} ${where} LIMIT ${limit}) matching`,
    params,
  };
}

/** What differs between the two SQL dialects in a search's conditions. */
export interface AdminDialect {
  /** Adds a parameter and returns its placeholder. */
  param(params: unknown[], value: unknown): string;
  /** `column` is one of `values` (a list parameter). */
  oneOf(params: unknown[], column: string, values: readonly string[]): string;
  /** The task's error message contains the needle, ignoring case (never a sealed error). */
  errorContains(params: unknown[], needle: string): string;
  /** The condition of a task whose result is a tool error (tasks.tool_error), and of one whose result is not. */
  readonly toolError: string;
  readonly noToolError: string;
  /**
   * The text of a tool error contains the needle, ignoring case: the message of the error the tool threw (`failure`),
   * or a text item of the result's content (never a sealed one).
   */
  toolErrorContains(params: unknown[], needle: string): string;
}

const RANGES = [
  ['createdFrom', 'created_at', '>='],
  ['createdTo', 'created_at', '<'],
  ['updatedFrom', 'updated_at', '>='],
  ['updatedTo', 'updated_at', '<'],
] as const;

/**
 * The conditions of a search within `tenants` (visibleTenants; undefined: any) with their parameters, or undefined
 * when nothing can match (no tenant visible, an empty status list).
 */
export function adminConditions(
  d: AdminDialect,
  tenants: readonly string[] | undefined,
  f: AdminTaskFilter,
  params: unknown[],
): string[] | undefined {
  if (tenants?.length === 0 || f.status?.length === 0 || f.outcome?.length === 0) return undefined;
  const c: string[] = [];
  const eq = (column: string, value: string | undefined): void => {
    if (value !== undefined) c.push(`${column} = ${d.param(params, value)}`);
  };
  if (tenants !== undefined)
    c.push(
      tenants.length === 1 ? `tenant = ${d.param(params, tenants[0])}` : d.oneOf(params, 'tenant', tenants),
    );
  eq('principal', f.principal);
  eq('tool', f.tool);
  eq('tool_version', f.toolVersion);
  eq('error_outcome', f.errorOutcome);
  if (f.status !== undefined) {
    const statuses = [...new Set(f.status)];
    c.push(
      statuses.length === 1
        ? `status = ${d.param(params, statuses[0])}`
        : d.oneOf(params, 'status', statuses),
    );
  }
  if (f.outcome !== undefined) c.push(outcomeCondition(d, f.outcome));
  for (const [key, column, op] of RANGES) {
    const v = f[key];
    if (v !== undefined) c.push(`${column} ${op} ${d.param(params, v)}`);
  }
  // A tool error is an error too, though its task completed.
  if (f.hasError !== undefined)
    c.push(f.hasError ? `(error IS NOT NULL OR ${d.toolError})` : `error IS NULL AND ${d.noToolError}`);
  if (f.errorText !== undefined && f.errorText !== '')
    c.push(
      `(${d.errorContains(params, f.errorText)} OR (${d.toolError} AND ${d.toolErrorContains(params, f.errorText)}))`,
    );
  return c;
}

/** The condition of a task that ended in any of `outcomes` (TaskOutcome: the status, tool_error apart). */
function outcomeCondition(d: AdminDialect, outcomes: readonly TaskOutcome[]): string {
  const one: Record<TaskOutcome, string> = {
    completed: `status = 'completed' AND ${d.noToolError}`,
    tool_error: d.toolError,
    failed: `status = 'failed'`,
    cancelled: `status = 'cancelled'`,
  };
  const each = [...new Set(outcomes)].map((o) => one[o]);
  return each.length === 1 ? (each[0] as string) : `(${each.map((c) => `(${c})`).join(' OR ')})`;
}

/** The keyset condition and ORDER BY of a page (rows after the cursor, in the page's order). */
export function adminPageOrder(
  d: AdminDialect,
  q: CheckedQuery,
  params: unknown[],
): { after: string | undefined; orderBy: string } {
  const column = q.sort === 'created' ? 'created_at' : 'updated_at';
  const dir = q.order === 'desc' ? 'DESC' : 'ASC';
  const after =
    q.after === undefined
      ? undefined
      : `(${column}, id) ${q.order === 'desc' ? '<' : '>'} (${d.param(params, q.after.t)}, ${d.param(params, q.after.id)})`;
  // With one tool asked for, the order names it first (the same order, as it is constant): the (tool, time, id) index
  // then gives the page without a sort, however few or old that tool's tasks are among the others.
  const lead = q.sort === 'created' && q.filter.tool !== undefined ? `tool ${dir}, ` : '';
  return { after, orderBy: `ORDER BY ${lead}${column} ${dir}, id ${dir}` };
}

/** The columns of a search row. */
const SUMMARY_COLUMNS = `id, tenant, principal, tool, tool_version, status, status_message, created_at, updated_at,
  attempt, error, tool_error, retry_of, error_outcome, paused_at`;

/**
 * The statement and parameters of one page of a search of `table` within `tenants` (undefined: any), in the
 * dialect's placeholders; undefined when nothing can match.
 */
export function adminSearchSql(
  d: AdminDialect,
  table: string,
  tenants: readonly string[] | undefined,
  q: CheckedQuery,
): { sql: string; params: unknown[] } | undefined {
  const params: unknown[] = [];
  const conditions = adminConditions(d, tenants, q.filter, params);
  if (conditions === undefined) return undefined;
  const { after, orderBy } = adminPageOrder(d, q, params);
  if (after !== undefined) conditions.push(after);
  const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
  const limit = d.param(params, q.limit + 1);
  return { sql: `SELECT ${SUMMARY_COLUMNS} FROM ${table} ${where} ${orderBy} LIMIT ${limit}`, params };
}

/** A page of `limit` rows from the `limit + 1` read: the cursor of the next page when there were more. */
export function adminPage<R>(
  rows: readonly R[],
  q: CheckedQuery,
  summary: (row: R) => AdminTaskSummary,
): AdminTaskPage {
  const items = rows.slice(0, q.limit).map(summary);
  const last = items[items.length - 1];
  if (rows.length <= q.limit || last === undefined) return { items };
  const t = q.sort === 'created' ? last.createdAt : last.updatedAt;
  return { items, next: encodeAdminCursor(q.sort, q.order, t, last.id) };
}

/** A window of the overview with nothing in it. */
export const emptyAdminWindow = (windowMs: number): AdminOverview['windows'][number] => ({
  windowMs,
  created: 0,
  completed: 0,
  failed: 0,
  toolErrors: 0,
});

/** Counts per tool, version, status and whether the tasks ended in a tool error, as read (one statement). */
export type ToolCounts = (AdminOverview['byTool'][number] & { toolError: boolean })[];

/** The overview from the counts per tool (their sums per status and outcome), the windows and the stuck count. */
export function adminOverview(
  counts: ToolCounts,
  windows: AdminOverview['windows'],
  stuck: number,
): AdminOverview {
  const byStatus: Record<TaskStatus, number> = {
    working: 0,
    input_required: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
  };
  const byOutcome: Record<TaskOutcome, number> = { completed: 0, tool_error: 0, failed: 0, cancelled: 0 };
  const byTool = new Map<string, AdminOverview['byTool'][number]>();
  for (const { toolError, ...row } of counts) {
    byStatus[row.status] += row.count;
    const outcome = outcomeOf(row.status, toolError);
    if (outcome !== undefined) byOutcome[outcome] += row.count;
    // A tool's completed tasks are one row, tool errors or not (byTool counts statuses).
    const key = JSON.stringify([row.tool, row.toolVersion ?? null, row.status]);
    const same = byTool.get(key);
    if (same === undefined) byTool.set(key, row);
    else same.count += row.count;
  }
  return { byStatus, byOutcome, byTool: [...byTool.values()], windows, stuck };
}

/**
 * An operator's cancel, done as the owner's own (TaskStore.requestCancel on the task's owner): a finished task, or
 * one past its TTL, is `terminal`.
 */
export function cancelOutcome(result: CancelResult): AdminActionResult {
  if (!result.ok) return { ok: false, reason: result.miss === 'expired' ? 'terminal' : 'not_found' };
  if (!result.cancelledNow && !result.running) return { ok: false, reason: 'terminal' };
  return { ok: true };
}

/** The columns a search reads. */
export interface AdminSummaryColumns extends TaskHeadColumns {
  error: string | null;
  error_outcome: string | null;
}

/** One row of a search, its status message and error opened (the error's data is left out). */
export function toAdminSummary(row: AdminSummaryColumns, open: Opener): AdminTaskSummary {
  const error = openColumn<TaskError>(row.error, 'tasks.error', row.id, open);
  return {
    ...toTaskHead(row, open),
    error:
      error === undefined
        ? undefined
        : {
            code: error.code,
            message: error.message,
            ...(row.error_outcome === null ? {} : { outcome: row.error_outcome }),
          },
  };
}
