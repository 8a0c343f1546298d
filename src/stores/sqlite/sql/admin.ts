// Prepared SQL of the SQLite task store. The operators' port: searches (one statement per set of filters, prepared
// once), a task's owner by id, its payload columns, retry, purge and the overview's counts.
import type { TaskStatus } from '../../../tasks/task.js';
import {
  adminSearchSql,
  type AdminDialect,
  type AdminSummaryColumns,
  type CheckedQuery,
  type ToolCounts,
} from '../../admin-query.js';
import type { PayloadColumns } from '../../admin-payloads.js';
import type { SqliteDatabase } from '../database.js';
import { FAIR_PLACE, NON_TERMINAL } from './conditions.js';

const dialect: AdminDialect = {
  param(params, value) {
    params.push(value);
    return '?';
  },
  oneOf(params, column, values) {
    params.push(JSON.stringify(values));
    return `${column} IN (SELECT value FROM json_each(?))`;
  },
  // Sealed errors are not JSON (and expired ones are plain): only plain messages are searched. lower() folds ASCII.
  errorContains(params, needle) {
    params.push(needle.toLowerCase());
    return `instr(lower(CASE WHEN json_valid(error) THEN json_extract(error, '$.message') END), ?) > 0`;
  },
};

/** The statement and parameters of one page of a search within `tenants` (undefined: any); undefined: no match. */
export const searchSql = (tenants: readonly string[] | undefined, q: CheckedQuery) =>
  adminSearchSql(dialect, 'tasks', tenants, q);

/** The scope condition of the overview's counts (`@tenants`: a JSON list), if any. */
const scoped = (tenants: readonly string[] | undefined): string =>
  tenants === undefined ? '' : 'tenant IN (SELECT value FROM json_each(@tenants)) AND';

function prepareOverview(db: SqliteDatabase, tenants: readonly string[] | undefined) {
  const s = scoped(tenants);
  const where = tenants === undefined ? '' : `WHERE ${s.slice(0, -4)}`;
  return {
    byTool: db.prepare(`
      SELECT tool, tool_version, status, count(*) AS n FROM tasks ${where}
      GROUP BY tool, tool_version, status ORDER BY tool, tool_version, status`),
    // `+status`: the ranges of tasks_updated hold the window's tasks; tasks_status would read every finished one.
    window: db.prepare(`
      SELECT
        (SELECT count(*) FROM tasks WHERE ${s} created_at > @since AND created_at <= @now) AS created,
        (SELECT count(*) FROM tasks WHERE ${s} +status = 'completed' AND updated_at > @since AND updated_at <= @now)
          AS completed,
        (SELECT count(*) FROM tasks WHERE ${s} +status = 'failed' AND updated_at > @since AND updated_at <= @now)
          AS failed`),
    stuck: db
      .prepare(`SELECT count(*) FROM tasks WHERE ${s} ${NON_TERMINAL} AND updated_at <= @before`)
      .pluck(),
  };
}

/** A task's tenant and payload columns: arguments, result and every input row, in the order asked. */
function preparePayloads(db: SqliteDatabase) {
  const task = db.prepare(`SELECT id, tenant, args, result FROM tasks WHERE id = ?`);
  const inputs = db.prepare(
    `SELECT key, request, answer FROM task_inputs WHERE task_id = ? ORDER BY asked_at, key`,
  );
  return (id: string): (PayloadColumns & { tenant: string }) | undefined => {
    const row = task.get(id) as (Omit<PayloadColumns, 'inputs'> & { tenant: string }) | undefined;
    return row === undefined ? undefined : { ...row, inputs: inputs.all(id) as PayloadColumns['inputs'] };
  };
}

export function prepareAdminQueries(db: SqliteDatabase) {
  const searches = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  const search = (sql: string) => {
    let statement = searches.get(sql);
    if (statement === undefined) searches.set(sql, (statement = db.prepare(sql)));
    return statement;
  };
  const overviews = { all: prepareOverview(db, undefined), some: prepareOverview(db, []) };
  const ownerOf = db.prepare(`SELECT tenant, principal, status FROM tasks WHERE id = ?`);
  const pendingInputs = db.prepare(
    `SELECT key FROM task_inputs WHERE task_id = ? AND answer IS NULL AND superseded = 0 ORDER BY asked_at, key`,
  );
  // Failed attempts of steps without a result are forgotten: the retried step's policy counts afresh.
  const forgetFailedAttempts = db.prepare(`
    DELETE FROM task_step_attempts
    WHERE task_id = @id AND name NOT IN (SELECT name FROM task_steps WHERE task_id = @id)`);
  const retry = db.prepare(`
    UPDATE tasks SET status = 'working', result = NULL, error = NULL, failure = NULL, status_message = @message,
      updated_at = @now, runnable = 1, cancel_requested = 0, lease_owner = NULL, lease_until = NULL, wake_at = NULL,
      fair_at = ${FAIR_PLACE}, placed_at = @now, expires_at = CASE WHEN ttl_ms IS NULL THEN NULL ELSE @now + ttl_ms END
    WHERE id = @id AND status = 'failed'`);
  const purge = db.prepare(`DELETE FROM tasks WHERE id = ? AND status IN ('completed','failed','cancelled')`);
  return {
    /** A page of a search within `tenants` (undefined: any), one row more than the page to tell if more follow. */
    search(tenants: readonly string[] | undefined, q: CheckedQuery): AdminSummaryColumns[] {
      const found = searchSql(tenants, q);
      return found === undefined ? [] : (search(found.sql).all(found.params) as AdminSummaryColumns[]);
    },
    ownerOf: (id: string) =>
      ownerOf.get(id) as { tenant: string; principal: string; status: TaskStatus } | undefined,
    pendingInputs: (id: string) => (pendingInputs.all(id) as { key: string }[]).map((r) => r.key),
    payloads: preparePayloads(db),
    /** Makes a failed task runnable again from its steps; false when it is not failed. */
    retry(id: string, owner: { tenant: string; principal: string }, message: string, now: number): boolean {
      if (retry.run({ id, now, message, tenant: owner.tenant, principal: owner.principal }).changes !== 1)
        return false;
      forgetFailedAttempts.run({ id });
      return true;
    },
    /** Deletes a finished task and all it keeps (ON DELETE CASCADE); false when it is not finished. */
    purge: (id: string) => purge.run(id).changes === 1,
    toolCounts(tenants: readonly string[] | undefined): ToolCounts {
      const o = tenants === undefined ? overviews.all : overviews.some;
      const rows = o.byTool.all(tenants === undefined ? {} : { tenants: JSON.stringify(tenants) }) as {
        tool: string;
        tool_version: string | null;
        status: TaskStatus;
        n: number;
      }[];
      return rows.map((r) => ({
        tool: r.tool,
        toolVersion: r.tool_version ?? undefined,
        status: r.status,
        count: r.n,
      }));
    },
    window(tenants: readonly string[] | undefined, windowMs: number, now: number) {
      const o = tenants === undefined ? overviews.all : overviews.some;
      const params = {
        since: now - windowMs,
        now,
        ...(tenants === undefined ? {} : { tenants: JSON.stringify(tenants) }),
      };
      const row = o.window.get(params) as { created: number; completed: number; failed: number };
      return { windowMs, ...row };
    },
    stuck(tenants: readonly string[] | undefined, before: number): number {
      const o = tenants === undefined ? overviews.all : overviews.some;
      return o.stuck.get({
        before,
        ...(tenants === undefined ? {} : { tenants: JSON.stringify(tenants) }),
      }) as number;
    },
  };
}

export type AdminQueries = ReturnType<typeof prepareAdminQueries>;
