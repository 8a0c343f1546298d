// Prepared SQL of the SQLite task store. Concurrency limits per key: the slots runs hold, and the tasks parked until
// a slot of their key frees, in a line of their own (docs/task-store-design.md, "Concurrency limits").
import type { SqliteDatabase } from '../database.js';
import type { KeptHolder } from '../../core/slot-holders.js';
import { FAIR_PLACE, FAIR_STEP } from './conditions.js';

/** How many keys with parked tasks one sweep looks at (more wait for the next sweep). */
export const SWEPT_KEYS = 1_000;

/** A task that holds its slot until it ends (concurrency_hold 'task') still does: it has not ended. */
const HOLDING_TASK = `t.concurrency_hold = 'task' AND t.status IN ('working','input_required')`;
/**
 * A slot row held: by a live run, the run of its token still holding a lease on the task at @now (working, or waiting
 * for live input, which keeps its lease: live-input.ts); or by a task that holds it until it ends (HOLDING_TASK).
 */
const HELD = `t.id = c.task_id AND (${HOLDING_TASK} OR (t.attempt = c.token AND t.lease_owner IS NOT NULL
  AND t.lease_until >= @now AND t.status IN ('working','input_required')))`;
/**
 * A holder row `l` live at @now (TaskStore.acquireSlot): a step's, while its run holds a lease on the task; a call's,
 * until its `until`.
 */
const LIVE_HOLDER = `(CASE WHEN l.task_id IS NULL THEN l.until >= @now ELSE EXISTS (SELECT 1 FROM tasks t
  WHERE t.id = l.task_id AND t.attempt = l.token AND t.lease_owner IS NOT NULL AND t.lease_until >= @now
    AND t.status IN ('working','input_required')) END)`;
/** A task parked for a slot of @key (the rows of tasks_parked and tasks_parked_owner). */
const PARKED = `parked_at IS NOT NULL AND status = 'working'`;
/**
 * The place a task of the owner takes in the parked line of @key: the rule of the main line (conditions.ts,
 * FAIR_PLACE) over the key's parked tasks, so that the owners waiting for one key take turns too.
 */
const PARKED_PLACE = `max(
  coalesce((SELECT fair_at FROM tasks INDEXED BY tasks_parked WHERE concurrency_key = @key AND ${PARKED}
    ORDER BY fair_at, placed_at, created_at LIMIT 1), @now),
  coalesce((SELECT fair_at FROM tasks INDEXED BY tasks_parked_owner
    WHERE concurrency_key = @key AND tenant = @tenant AND principal = @principal AND ${PARKED}
    ORDER BY fair_at DESC LIMIT 1) + ${FAIR_STEP}, 0))`;

/** A task parked at the head of its key's line, as unparking reads it. */
export interface ParkedTask {
  id: string;
  tenant: string;
  principal: string;
  concurrency_limit: number;
}

export function prepareSlotQueries(db: SqliteDatabase) {
  // The slots runs hold, plus the live holders (steps, calls within their request) other than @holder.
  const held = db
    .prepare(
      `SELECT (SELECT count(*) FROM concurrency_slots c JOIN tasks t ON ${HELD} WHERE c.key = @key AND c.task_id <> @id)
        + (SELECT count(*) FROM slot_holders l WHERE l.key = @key AND l.holder <> @holder AND ${LIVE_HOLDER})`,
    )
    .pluck();
  const dropLapsedHolders = db.prepare(`
    DELETE FROM slot_holders AS l WHERE l.key = @key AND l.holder <> @holder AND NOT ${LIVE_HOLDER}`);
  const take = db.prepare(`
    INSERT INTO concurrency_slots (task_id, key, token) VALUES (?, ?, ?)
    ON CONFLICT (task_id) DO UPDATE SET key = excluded.key, token = excluded.token`);
  const park = db.prepare(`
    UPDATE tasks SET runnable = 0, parked_at = @now, fair_at = ${PARKED_PLACE}, placed_at = @now, updated_at = @now
    WHERE id = @id`);
  // A task holding its slot until it ends keeps it when a run ends otherwise (a sleep, a back-off, an input wait).
  const release = db
    .prepare(
      `DELETE FROM concurrency_slots AS c WHERE c.task_id = ? AND c.token = ?
        AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = c.task_id AND ${HOLDING_TASK}) RETURNING key`,
    )
    .pluck();
  const dropLapsed = db.prepare(`
    DELETE FROM concurrency_slots AS c WHERE c.key = @key AND NOT EXISTS (SELECT 1 FROM tasks t WHERE ${HELD})`);
  const heads = db.prepare(`
    SELECT id, tenant, principal, concurrency_limit FROM tasks INDEXED BY tasks_parked
    WHERE concurrency_key = @key AND ${PARKED} ORDER BY fair_at, placed_at, created_at LIMIT @n`);
  const unpark = db.prepare(`
    UPDATE tasks SET runnable = 1, parked_at = NULL, fair_at = ${FAIR_PLACE}, placed_at = @now WHERE id = @id`);
  // One index probe per key (a skip scan of tasks_parked), never a read of the parked tasks.
  const parkedKeys = db
    .prepare(
      `WITH RECURSIVE k(key) AS (
        SELECT (SELECT min(concurrency_key) FROM tasks INDEXED BY tasks_parked WHERE ${PARKED})
        UNION ALL
        SELECT (SELECT min(concurrency_key) FROM tasks INDEXED BY tasks_parked WHERE ${PARKED} AND concurrency_key > k.key)
        FROM k WHERE k.key IS NOT NULL LIMIT ${SWEPT_KEYS}
      ) SELECT key FROM k WHERE key IS NOT NULL`,
    )
    .pluck();
  const parkedByTool = db.prepare(
    `SELECT tool, count(*) AS n FROM tasks INDEXED BY tasks_parked WHERE ${PARKED} GROUP BY tool`,
  );
  const parkedIn = db
    .prepare(
      `SELECT count(*) FROM tasks INDEXED BY tasks_parked_owner WHERE concurrency_key = @key AND ${PARKED}
        AND (@tenants IS NULL OR tenant IN (SELECT value FROM json_each(@tenants)))`,
    )
    .pluck();
  return {
    /** The parked tasks of `key` within `tenants` (undefined: any). */
    parkedIn: (key: string, tenants: readonly string[] | undefined) =>
      parkedIn.get({ key, tenants: tenants === undefined ? null : JSON.stringify(tenants) }) as number,
    /** Slots of `key` held by live runs other than task `id`'s, and by live holders other than `holder`. */
    slotsHeld: (key: string, id: string, now: number, holder = '') =>
      held.get({ key, id, now, holder }) as number,
    /** The run `token` of task `id` holds a slot of `key` (replacing the task's earlier slot row, if any). */
    takeSlot: (id: string, key: string, token: number) => take.run(id, key, token),
    /** Takes task `id` out of the line into the parked line of `key`. */
    park: (id: string, key: string, tenant: string, principal: string, now: number) =>
      park.run({ id, key, tenant, principal, now }),
    /** Frees the slot the run `token` of task `id` held; its key, if it held one. */
    releaseSlot: (id: string, token: number) => release.get(id, token) as string | undefined,
    /** Deletes the slot rows of `key` whose run no longer holds a lease, and its lapsed holders but `holder`. */
    dropLapsedSlots: (key: string, now: number, holder = '') => {
      dropLapsed.run({ key, now });
      dropLapsedHolders.run({ key, now, holder });
    },
    /** The first `n` tasks in the parked line of `key`. */
    parkedHeads: (key: string, n: number) => heads.all({ key, n }) as ParkedTask[],
    /** Makes a parked task runnable again, at a new place in the main line (as a wait come due takes). */
    unpark: (t: ParkedTask, now: number) =>
      unpark.run({ id: t.id, tenant: t.tenant, principal: t.principal, now }),
    /** Keys that have parked tasks (at most SWEPT_KEYS). */
    parkedKeys: () => parkedKeys.all() as string[],
    /** The parked tasks, by tool. */
    parkedByTool: () => parkedByTool.all() as { tool: string; n: number }[],
  };
}

/** The holders of slots other than a task's claim (TaskStore.acquireSlot, releaseSlot; counted by slotsHeld). */
export function prepareHolderQueries(db: SqliteDatabase) {
  const holding = db
    .prepare(`SELECT 1 FROM slot_holders l WHERE l.holder = @holder AND l.key = @key AND ${LIVE_HOLDER}`)
    .pluck();
  const renewHolder = db.prepare(`UPDATE slot_holders SET until = @until WHERE holder = @holder`);
  const takeHolder = db.prepare(`
    INSERT INTO slot_holders (holder, key, task_id, token, until) VALUES (@holder, @key, @taskId, @token, @until)
    ON CONFLICT (holder) DO UPDATE SET key = excluded.key, task_id = excluded.task_id, token = excluded.token,
      until = excluded.until`);
  const freeHolder = db.prepare(`DELETE FROM slot_holders WHERE holder = ? RETURNING key`).pluck();
  return {
    /** Whether `holder` holds a live slot of `key`. */
    holdsSlot: (holder: string, key: string, now: number) => holding.get({ holder, key, now }) === 1,
    /** Moves on the end of a holder's slot. */
    renewHolder: (holder: string, until: number | null) => renewHolder.run({ holder, until }),
    /** `h` holds a slot of its key. */
    takeHolder: (h: KeptHolder) =>
      takeHolder.run({ holder: h.id, key: h.key, taskId: h.taskId, token: h.token, until: h.until }),
    /** Frees the slot `holder` held; its key, if it held one. */
    freeHolder: (holder: string) => freeHolder.get(holder) as string | undefined,
  };
}
