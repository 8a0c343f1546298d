// The operators' port on PostgreSQL: searches and counts within a tenant scope; a cancel done as the owner's own;
// retry and purge under the task's row lock, notified in the statement that commits them.
import type {
  AdminActionResult,
  AdminOverview,
  AdminRetryResult,
  AdminScope,
  AdminTaskFilter,
  AdminTaskPage,
  AdminTaskQuery,
  TaskAdmin,
} from '../../tasks/admin.js';
import { isTerminal, type TaskStatus } from '../../tasks/task.js';
import { type TaskInspection } from '../../tasks/inspection.js';
import {
  adminOverview,
  adminPage,
  cancelOutcome,
  checkAdminFilter,
  checkAdminQuery,
  emptyAdminWindow,
  inAdminScope,
  toAdminSummary,
  visibleTenants,
  type AdminSummaryColumns,
} from '../admin-query.js';
import { openStepValue, toAdminPayloads } from '../admin-payloads.js';
import type { StoreContext } from './context.js';
import type { Run } from './db.js';
import { requestCancel } from './owner-writes.js';
import { retryFork } from './retry-fork.js';
import { countSql, searchSql } from './sql/admin.js';

const NOT_FOUND = { ok: false, reason: 'not_found' } as const;

interface PayloadRow extends Record<string, unknown> {
  id: string;
  tenant: string;
  args: string;
  result: string | null;
  inputs: [key: string, request: string | null, answer: string | null][];
}

interface OwnerRow extends Record<string, unknown> {
  tenant: string;
  principal: string;
  status: TaskStatus;
}

/** `inspect`: the store's own (TaskStore.inspect). */
export function postgresAdmin(
  ctx: StoreContext,
  inspect: (id: string, now: number) => Promise<TaskInspection | undefined>,
): TaskAdmin {
  const { db, q, codec, feed } = ctx;
  const sql = q.admin;

  /** Retry or purge under the row lock; `write` runs when the task is within the scope. */
  const locked = async <R extends AdminActionResult | AdminRetryResult>(
    scope: AdminScope,
    id: string,
    write: (row: OwnerRow, run: Run) => Promise<R>,
  ): Promise<R | typeof NOT_FOUND> =>
    db.tx(async (run) => {
      const [row] = await run<OwnerRow>(sql.lock, [id]);
      if (row === undefined || !inAdminScope(scope, row.tenant)) return NOT_FOUND;
      return write(row, run);
    });

  return {
    list: (scope, query) => searchPage(ctx, scope, query),
    count: (scope, filter, max) => countMatching(ctx, scope, filter, max),

    async detail(scope, id, now) {
      const found = await inspect(id, now);
      if (found === undefined || !inAdminScope(scope, found.owner.tenant)) return undefined;
      if (found.status !== 'input_required') return found;
      const keys = await db.query<{ key: string }>(sql.pendingInputs, [id]);
      return { ...found, pendingInputs: keys.map((r) => r.key) };
    },

    async payloads(scope, id) {
      const [row] = await db.query<PayloadRow>(sql.payloads, [id]);
      if (row === undefined || !inAdminScope(scope, row.tenant)) return undefined;
      const inputs = row.inputs.map(([key, request, answer]) => ({ key, request, answer }));
      return toAdminPayloads({ ...row, inputs }, codec.open);
    },

    async stepValue(scope, id, name) {
      const [row] = await db.query<{ tenant: string; value: string }>(sql.stepValue, [id, name]);
      if (row === undefined || !inAdminScope(scope, row.tenant)) return undefined;
      return openStepValue(id, name, row.value, codec.open);
    },

    async cancel(scope, id, now) {
      const [row] = await db.query<OwnerRow>(sql.ownerOf, [id]);
      if (row === undefined || !inAdminScope(scope, row.tenant)) return NOT_FOUND;
      return cancelOutcome(
        await requestCancel(ctx, id, { tenant: row.tenant, principal: row.principal }, now),
      );
    },

    async retry(scope, id, now, options) {
      const result = await locked(scope, id, async (_row, run) =>
        retryFork(ctx, run, id, now, options?.record),
      );
      if (result.ok) feed.emitLocal([{ taskId: result.taskId, runnable: true, cancelRequested: false }]);
      return result;
    },

    async purge(scope, id) {
      const result = await locked(scope, id, async (row, run) => {
        if (!isTerminal(row.status)) return { ok: false, reason: 'not_terminal' };
        const deleted = await run(sql.purge, [id]);
        return deleted.length === 1 ? { ok: true } : { ok: false, reason: 'not_terminal' };
      });
      if (result.ok) feed.emitLocal([{ taskId: id, runnable: false, cancelRequested: false }]);
      return result;
    },

    overview: (scope, now, options) => readOverview(ctx, scope, now, options),
  };
}

/** A page of a search within the scope (TaskAdmin.list). */
async function searchPage(
  { db, codec, quotedSchema }: StoreContext,
  scope: AdminScope,
  query: AdminTaskQuery,
): Promise<AdminTaskPage> {
  const checked = checkAdminQuery(query);
  const search = searchSql(quotedSchema, visibleTenants(scope, checked.filter.tenant), checked);
  const rows =
    search === undefined
      ? []
      : await db.query<AdminSummaryColumns & Record<string, unknown>>(search.sql, search.params);
  return adminPage(rows, checked, (row) => toAdminSummary(row, codec.open));
}

/** How many tasks within the scope match the filter, up to `max` (TaskAdmin.count): one statement. */
async function countMatching(
  { db, quotedSchema }: StoreContext,
  scope: AdminScope,
  filter: AdminTaskFilter,
  max: number,
): Promise<number> {
  checkAdminFilter(filter);
  const counted = countSql(quotedSchema, visibleTenants(scope, filter.tenant), filter, max);
  if (counted === undefined) return 0;
  const [row] = await db.query<{ n: string }>(counted.sql, counted.params);
  return Number(row?.n ?? 0);
}

/** The overview's counts within the scope, read at once (each count an index range, the counts per tool a scan). */
async function readOverview(
  { db, q }: StoreContext,
  scope: AdminScope,
  now: number,
  { windowsMs, stuckMs }: { windowsMs: readonly number[]; stuckMs: number },
): Promise<AdminOverview> {
  const tenants = visibleTenants(scope);
  if (tenants?.length === 0) return adminOverview([], windowsMs.map(emptyAdminWindow), 0);
  const o = tenants === undefined ? q.admin.all : q.admin.some;
  const within = tenants === undefined ? [] : [tenants];
  const count = <R extends Record<string, unknown>>(text: string, params: unknown[]) =>
    db.query<R>(text, [...params, ...within]);
  const window = async (windowMs: number) => {
    const [row] = await count<WindowRow>(o.window, [now - windowMs, now]);
    return row === undefined ? emptyAdminWindow(windowMs) : { ...row, windowMs };
  };
  const [byTool, windows, [stuck]] = await Promise.all([
    count<ToolRow>(o.byTool, []),
    Promise.all(windowsMs.map(window)),
    count<{ n: number }>(o.stuck, [now - stuckMs]),
  ]);
  const tools = byTool.map((r) => ({
    tool: r.tool,
    toolVersion: r.tool_version ?? undefined,
    status: r.status,
    toolError: r.tool_error,
    count: r.n,
  }));
  return adminOverview(tools, windows, stuck?.n ?? 0);
}

interface ToolRow extends Record<string, unknown> {
  tool: string;
  tool_version: string | null;
  status: TaskStatus;
  tool_error: boolean;
  n: number;
}

type WindowRow = Omit<AdminOverview['windows'][number], 'windowMs'> & Record<string, unknown>;
