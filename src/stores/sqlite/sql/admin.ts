// Prepared SQL of the SQLite task store. The operators' port: searches (one statement per set of filters, prepared
// once), a task's owner by id, its payload columns, a retry's new task, purge and the overview's counts.
import type { AdminOverview, AdminTaskFilter } from '../../../tasks/admin.js';
import type { TaskStatus } from '../../../tasks/task.js';
import {
  adminCountSql,
  adminSearchSql,
  type AdminDialect,
  type AdminSummaryColumns,
  type CheckedQuery,
  type ToolCounts,
} from '../../admin-query.js';
import type { PayloadColumns } from '../../admin-payloads.js';
import type { ForkInput, ForkRows, ForkSource, ForkState, ForkStep } from '../../retry-fork.js';
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
  toolError: 'tool_error = 1',
  noToolError: 'tool_error = 0',
  toolErrorContains(params, needle) {
    params.push(needle.toLowerCase(), needle.toLowerCase());
    return `(instr(lower(CASE WHEN json_valid(failure) THEN json_extract(failure, '$.message') END), ?) > 0
      OR EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(result) THEN result END, '$.content') c
        WHERE instr(lower(CASE WHEN c.type = 'object' THEN json_extract(c.value, '$.text') END), ?) > 0))`;
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
      SELECT tool, tool_version, status, tool_error, count(*) AS n FROM tasks ${where}
      GROUP BY tool, tool_version, status, tool_error ORDER BY tool, tool_version, status`),
    // `+status`: the ranges of tasks_updated hold the window's tasks; tasks_status would read every finished one.
    window: db.prepare(`
      SELECT
        (SELECT count(*) FROM tasks WHERE ${s} created_at > @since AND created_at <= @now) AS created,
        (SELECT count(*) FROM tasks WHERE ${s} +status = 'completed' AND updated_at > @since AND updated_at <= @now)
          AS completed,
        (SELECT count(*) FROM tasks WHERE ${s} +status = 'failed' AND updated_at > @since AND updated_at <= @now)
          AS failed,
        (SELECT count(*) FROM tasks WHERE ${s} +tool_error = 1 AND updated_at > @since AND updated_at <= @now)
          AS toolErrors`),
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

/** The row a retry copies; undefined when the task is gone. */
interface ForkRow {
  id: string;
  tenant: string;
  principal: string;
  status: TaskStatus;
  tool_error: number;
  sealed: number;
  args: string;
  client_caps: string;
}

/** A retry's reads of the task retried and its writes of the new task (TaskAdmin.retry, retry-fork.ts). */
function prepareFork(db: SqliteDatabase) {
  const task = db.prepare(
    `SELECT id, tenant, principal, status, tool_error, sealed, args, client_caps FROM tasks WHERE id = ?`,
  );
  const steps = db.prepare(`SELECT name, value, seq, started_at AS startedAt, saved_at AS savedAt
    FROM task_steps WHERE task_id = ? ORDER BY seq, name`);
  const answered = db.prepare(`SELECT key, request, answer, asked_at AS askedAt, answered_at AS answeredAt
    FROM task_inputs WHERE task_id = ? AND answer IS NOT NULL ORDER BY asked_at, key`);
  // The new task takes its fair place in line as a task its owner created now would.
  const insert = db.prepare(`
    INSERT INTO tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at, ttl_ms,
      poll_interval_ms, expires_at, replay_after_crash, client_caps, runnable, sealed, fair_at, placed_at,
      tool_version, created_message, retry_of, concurrency_key, concurrency_limit, concurrency_hold, rate_key,
      rate_limit, rate_period_ms)
    SELECT @newId, tenant, principal, tool, @args, 'working', @message, @now, @now, ttl_ms, poll_interval_ms,
      CASE WHEN ttl_ms IS NULL THEN NULL ELSE @now + ttl_ms END, replay_after_crash, @caps, 1, @sealed,
      ${FAIR_PLACE}, @now, tool_version, @message, id, concurrency_key, concurrency_limit, concurrency_hold,
      rate_key, rate_limit, rate_period_ms
    FROM tasks WHERE id = @id`);
  const insertStep = db.prepare(`INSERT INTO task_steps (task_id, name, value, seq, started_at, saved_at)
    VALUES (@id, @name, @value, @seq, @startedAt, @savedAt)`);
  const insertInput =
    db.prepare(`INSERT INTO task_inputs (task_id, key, request, answer, asked_at, answered_at)
    VALUES (@id, @key, @request, @answer, @askedAt, @answeredAt)`);
  return {
    /** The task's status and what a retry copies of it. */
    forkSource(id: string): (ForkSource & ForkState) | undefined {
      const row = task.get(id) as ForkRow | undefined;
      if (row === undefined) return undefined;
      return {
        id,
        owner: { tenant: row.tenant, principal: row.principal },
        status: row.status,
        toolError: row.tool_error === 1,
        sealed: row.sealed === 1,
        args: row.args,
        caps: row.client_caps,
        steps: steps.all(id) as ForkStep[],
        inputs: answered.all(id) as ForkInput[],
      };
    },
    /** Inserts the new task of a retry of `retried` (of `owner`), with its steps and answers. */
    insertFork(retried: string, owner: { tenant: string; principal: string }, fork: ForkRows, now: number) {
      insert.run({
        id: retried,
        newId: fork.id,
        args: fork.args,
        message: fork.statusMessage,
        now,
        caps: fork.caps,
        sealed: fork.sealed ? 1 : 0,
        tenant: owner.tenant,
        principal: owner.principal,
      });
      for (const step of fork.steps) insertStep.run({ id: fork.id, ...step });
      for (const input of fork.inputs) insertInput.run({ id: fork.id, ...input });
    },
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
  const purge = db.prepare(`DELETE FROM tasks WHERE id = ? AND status IN ('completed','failed','cancelled')`);
  const stepValue = db.prepare(
    `SELECT t.tenant, s.value FROM task_steps s JOIN tasks t ON t.id = s.task_id WHERE s.task_id = ? AND s.name = ?`,
  );
  return {
    /** A page of a search within `tenants` (undefined: any), one row more than the page to tell if more follow. */
    search(tenants: readonly string[] | undefined, q: CheckedQuery): AdminSummaryColumns[] {
      const found = searchSql(tenants, q);
      return found === undefined ? [] : (search(found.sql).all(found.params) as AdminSummaryColumns[]);
    },
    /** How many tasks within `tenants` match the filter, up to `max`. */
    count(tenants: readonly string[] | undefined, filter: AdminTaskFilter, max: number): number {
      const found = adminCountSql(dialect, 'tasks', tenants, filter, max);
      return found === undefined ? 0 : (search(found.sql).pluck().get(found.params) as number);
    },
    ownerOf: (id: string) =>
      ownerOf.get(id) as { tenant: string; principal: string; status: TaskStatus } | undefined,
    pendingInputs: (id: string) => (pendingInputs.all(id) as { key: string }[]).map((r) => r.key),
    payloads: preparePayloads(db),
    /** A step's stored value and its task's tenant. */
    stepValue: (id: string, name: string) =>
      stepValue.get(id, name) as { tenant: string; value: string } | undefined,
    ...prepareFork(db),
    /** Deletes a finished task and all it keeps (ON DELETE CASCADE); false when it is not finished. */
    purge: (id: string) => purge.run(id).changes === 1,
    toolCounts(tenants: readonly string[] | undefined): ToolCounts {
      const o = tenants === undefined ? overviews.all : overviews.some;
      const rows = o.byTool.all(tenants === undefined ? {} : { tenants: JSON.stringify(tenants) }) as {
        tool: string;
        tool_version: string | null;
        status: TaskStatus;
        tool_error: number;
        n: number;
      }[];
      return rows.map((r) => ({
        tool: r.tool,
        toolVersion: r.tool_version ?? undefined,
        status: r.status,
        toolError: r.tool_error === 1,
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
      const row = o.window.get(params) as Omit<AdminOverview['windows'][number], 'windowMs'>;
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
