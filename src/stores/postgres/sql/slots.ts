// SQL of the PostgreSQL task store. Concurrency limits per key: the slots runs hold, and the tasks parked until a
// slot of their key frees, in a line of their own (docs/task-store-design.md, "Concurrency limits"). Every
// statement here runs in a transaction holding the key's lock (lockKey), so counting and taking are one step.
import { FAIR_STEP, placedAgain, type Notify } from './fragments.js';

/** How many keys with parked tasks one sweep looks at (more wait for the next sweep). */
export const SWEPT_KEYS = 1_000;

/** A task (alias `t`) that holds its slot until it ends (concurrency_hold 'task') still does: it has not ended. */
const HOLDING_TASK = `t.concurrency_hold = 'task' AND t.status IN ('working','input_required')`;
/**
 * A slot row `c` held at `now`: by a live run, the run of its token still holding a lease on the task (working, or
 * waiting for live input, which keeps its lease: live-input.ts); or by a task that holds it until it ends.
 */
const held = (s: string, now: string): string => `EXISTS (SELECT 1 FROM ${s}.tasks t
  WHERE t.id = c.task_id AND (${HOLDING_TASK} OR (t.attempt = c.token AND t.lease_owner IS NOT NULL
    AND t.lease_until >= ${now} AND t.status IN ('working','input_required'))))`;
/**
 * A holder row `l` live at `now` (TaskStore.acquireSlot): a step's, while its run holds a lease on the task; a call's,
 * until its `until`.
 */
const liveHolder = (s: string, now: string): string => `(CASE WHEN l.task_id IS NULL THEN l.until >= ${now}
  ELSE EXISTS (SELECT 1 FROM ${s}.tasks t WHERE t.id = l.task_id AND t.attempt = l.token AND t.lease_owner IS NOT NULL
    AND t.lease_until >= ${now} AND t.status IN ('working','input_required')) END)`;
/** The live holders of `key` other than `holder` (a step's, a call's: counted with the slots runs hold). */
const holders = (s: string, key: string, now: string, holder = "''"): string =>
  `(SELECT count(*)::int FROM ${s}.slot_holders l WHERE l.key = ${key} AND l.holder <> ${holder} AND ${liveHolder(s, now)})`;
/** A task (alias `a`) parked for a slot of its key (the rows of tasks_parked and tasks_parked_owner). */
const parked = (a: string): string => `${a}.parked_at IS NOT NULL AND ${a}.status = 'working'`;

/**
 * The place a task of the owner takes in the parked line of `key`: the rule of the main line (fragments.ts,
 * fairPlace) over the key's parked tasks, so that the owners waiting for one key take turns too.
 */
const parkedPlace = (
  s: string,
  key: string,
  now: string,
  tenant: string,
  principal: string,
): string => `greatest(
  coalesce((SELECT h.fair_at FROM ${s}.tasks h WHERE h.concurrency_key = ${key} AND ${parked('h')}
    ORDER BY h.fair_at, h.placed_at, h.created_at LIMIT 1), ${now}),
  coalesce((SELECT o.fair_at FROM ${s}.tasks o
    WHERE o.concurrency_key = ${key} AND o.tenant = ${tenant} AND o.principal = ${principal} AND ${parked('o')}
    ORDER BY o.fair_at DESC LIMIT 1) + ${FAIR_STEP}, 0))`;

/** `s`: the quoted schema name. */
export function slotSql(s: string, notify: Notify) {
  return {
    /** $1 the key: serialises, until commit, the transactions that count and take the key's slots. */
    lockKey: `SELECT pg_advisory_xact_lock(hashtextextended('durable-mcp:slot:' || $1::text, 0))`,

    /**
     * $1 id, $2 the claim's token, $3 key, $4 limit, $5 now, $6 and $7 the lease the claim replaced. With a free
     * slot (those of live runs of other tasks counted), the run takes it; otherwise the claim is undone (token,
     * lease as they were: a takeover stays one) and the task is parked at its place in the key's line.
     */
    takeOrPark: `
      WITH live AS (
        SELECT count(*)::int + ${holders(s, '$3', '$5::bigint')} AS n FROM ${s}.concurrency_slots c WHERE c.key = $3 AND c.task_id <> $1 AND ${held(s, '$5::bigint')}
      ), took AS (
        INSERT INTO ${s}.concurrency_slots (task_id, key, token) SELECT $1, $3, $2 FROM live WHERE live.n < $4
        ON CONFLICT (task_id) DO UPDATE SET key = EXCLUDED.key, token = EXCLUDED.token
        RETURNING task_id
      ), parked AS (
        UPDATE ${s}.tasks t SET runnable = false, parked_at = $5, attempt = t.attempt - 1, lease_owner = $6,
          lease_until = $7, fair_at = ${parkedPlace(s, '$3', '$5::bigint', 't.tenant', 't.principal')}, placed_at = $5,
          updated_at = $5, revision = t.revision + 1
        FROM live WHERE t.id = $1 AND t.attempt = $2 AND live.n >= $4
        RETURNING t.id
      ), announced AS (SELECT ${notify('p.id', 'false', 'false')} FROM parked p)
      SELECT (SELECT count(*) FROM took)::int AS took, (SELECT count(*) FROM announced)::int AS parked`,

    /**
     * $1 id, $2 token: the slot that run held goes (its key back, if it held one), unless its task holds it until it
     * ends and has not (a sleep, a back-off, an input wait).
     */
    releaseSlot: `DELETE FROM ${s}.concurrency_slots c WHERE c.task_id = $1 AND c.token = $2
      AND NOT EXISTS (SELECT 1 FROM ${s}.tasks t WHERE t.id = c.task_id AND ${HOLDING_TASK}) RETURNING key`,

    /**
     * $1 key, $2 now: slot rows whose run no longer holds a lease go, and as many parked tasks of the key as it has
     * free slots (under the limit of the first in its line) take a new place in the main line, as a wait come due
     * does, and become runnable. Returns their ids (and notifies other replicas).
     */
    wakeParked: `
      WITH lapsed AS (
        DELETE FROM ${s}.concurrency_slots c WHERE c.key = $1 AND NOT ${held(s, '$2::bigint')}
      ), lapsed_holders AS (DELETE FROM ${s}.slot_holders l WHERE l.key = $1 AND NOT ${liveHolder(s, '$2::bigint')}
      ), live AS (
        SELECT count(*)::int + ${holders(s, '$1', '$2::bigint')} AS n FROM ${s}.concurrency_slots c
        WHERE c.key = $1 AND ${held(s, '$2::bigint')}
      ), head AS (
        SELECT h.concurrency_limit AS lim FROM ${s}.tasks h WHERE h.concurrency_key = $1 AND ${parked('h')}
        ORDER BY h.fair_at, h.placed_at, h.created_at LIMIT 1
      ), picked AS (
        SELECT p.id, p.tenant, p.principal, p.fair_at AS earlier, p.placed_at AS taken, p.created_at
        FROM ${s}.tasks p WHERE p.concurrency_key = $1 AND ${parked('p')}
        ORDER BY p.fair_at, p.placed_at, p.created_at
        LIMIT greatest((SELECT lim FROM head) - (SELECT n FROM live), 0)
        FOR UPDATE SKIP LOCKED
      ), placed AS (${placedAgain(s, '$2::bigint')}
      ), woken AS (
        UPDATE ${s}.tasks t SET runnable = true, parked_at = NULL, fair_at = pl.fair_at, placed_at = $2,
          revision = t.revision + 1
        FROM placed pl WHERE t.id = pl.id
        RETURNING t.id
      )
      SELECT w.id, ${notify('w.id', 'true', 'false')} FROM woken w`,

    /** Keys that have parked tasks (at most SWEPT_KEYS): one index probe per key, never a read of the parked tasks. */
    parkedKeys: `
      WITH RECURSIVE k(key) AS (
        (SELECT a.concurrency_key FROM ${s}.tasks a WHERE ${parked('a')} ORDER BY a.concurrency_key LIMIT 1)
        UNION ALL
        SELECT (SELECT a.concurrency_key FROM ${s}.tasks a WHERE ${parked('a')} AND a.concurrency_key > k.key
          ORDER BY a.concurrency_key LIMIT 1)
        FROM k WHERE k.key IS NOT NULL
      ) SELECT key FROM k WHERE key IS NOT NULL LIMIT ${SWEPT_KEYS}`,

    parkedByTool: `SELECT a.tool, count(*)::int AS n FROM ${s}.tasks a WHERE ${parked('a')} GROUP BY a.tool`,
  };
}

/** `s`: the quoted schema name. What the operators' flow view reads of a key with parked tasks. */
export function flowSql(s: string) {
  return {
    /** $1 key, $2 tenants (text[]; null: any): its parked tasks within them. */
    parkedIn: `SELECT count(*)::int AS n FROM ${s}.tasks a WHERE a.concurrency_key = $1 AND ${parked('a')}
      AND ($2::text[] IS NULL OR a.tenant = ANY ($2::text[]))`,
    /** $1 key: the limit of the first parked task in its line. */
    headLimit: `SELECT h.concurrency_limit AS n FROM ${s}.tasks h WHERE h.concurrency_key = $1 AND ${parked('h')}
      ORDER BY h.fair_at, h.placed_at, h.created_at LIMIT 1`,
    /** $1 key, $2 now: the slots of the key held now, by runs and by other holders (a step's, a call's). */
    slotsHeld: `SELECT count(*)::int + ${holders(s, '$1', '$2::bigint')} AS n FROM ${s}.concurrency_slots c
      WHERE c.key = $1 AND ${held(s, '$2::bigint')}`,
  };
}

/** `s`: the quoted schema name. The holders of slots other than a task's claim (TaskStore.acquireSlot). */
export function holderSql(s: string) {
  return {
    /**
     * $1 holder, $2 key, $3 limit, $4 task id, $5 token, $6 until, $7 now (TaskStore.acquireSlot): a holder that still
     * holds its slot renews it; otherwise, with a free slot (the slots runs other than task $4's hold, and the live
     * holders), it takes one. Lapsed holders of the key go first. Returns whether it holds one.
     */
    acquireHolder: `
      WITH lapsed AS (
        DELETE FROM ${s}.slot_holders l WHERE l.key = $2 AND l.holder <> $1 AND NOT ${liveHolder(s, '$7::bigint')}
      ), own AS (
        SELECT l.holder FROM ${s}.slot_holders l WHERE l.holder = $1 AND l.key = $2 AND ${liveHolder(s, '$7::bigint')}
      ), live AS (
        SELECT count(*)::int + ${holders(s, '$2', '$7::bigint', '$1')} AS n
        FROM ${s}.concurrency_slots c WHERE c.key = $2 AND c.task_id <> coalesce($4::text, '') AND ${held(s, '$7::bigint')}
      ), took AS (
        INSERT INTO ${s}.slot_holders (holder, key, task_id, token, until)
        SELECT $1, $2, $4::text, $5::int, $6::bigint FROM live WHERE EXISTS (SELECT 1 FROM own) OR live.n < $3
        ON CONFLICT (holder) DO UPDATE SET key = EXCLUDED.key, task_id = EXCLUDED.task_id, token = EXCLUDED.token,
          until = EXCLUDED.until
        RETURNING holder
      )
      SELECT count(*)::int AS took FROM took`,

    /** $1 holder: the slot it held goes; its key back, if it held one. */
    freeHolder: `DELETE FROM ${s}.slot_holders WHERE holder = $1 RETURNING key`,
  };
}
