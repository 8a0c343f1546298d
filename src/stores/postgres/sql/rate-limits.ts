// SQL of the PostgreSQL task store. Rate limits per key: the row of each key (its theoretical arrival time), the
// start counted or reserved on a task, and the tasks waiting for a reserved start (docs/task-store-design.md, "Rate
// limits"). The statements that read and write a key's row run in a transaction holding the key's lock (lockRateKey).
import type { Notify } from './fragments.js';

/** How many rows of keys whose time is past one sweep deletes at most (more go on the next). */
export const SWEPT_RATE_ROWS = 1_000;
/** A task (alias `a`) waiting for the start a claim reserved for it (among the rows of tasks_rate_waits). */
const rateWait = (a: string): string =>
  `${a}.rate_key IS NOT NULL AND ${a}.attempt = 0 AND ${a}.status = 'working' AND ${a}.wake_at IS NOT NULL`;

/** `s`: the quoted schema name. */
export function rateSql(s: string, notify: Notify) {
  return {
    /** $1 the key: serialises, until commit, the transactions that count starts under it (across replicas). */
    lockRateKey: `SELECT pg_advisory_xact_lock(hashtextextended('durable-mcp:rate:' || $1::text, 0))`,
    /** $1 key: its theoretical arrival time (no row: none). */
    rateTat: `SELECT tat FROM ${s}.rate_limits WHERE key = $1`,
    /** $1 key, $2 its new theoretical arrival time. */
    setRateTat: `INSERT INTO ${s}.rate_limits (key, tat) VALUES ($1, $2::float8)
      ON CONFLICT (key) DO UPDATE SET tat = EXCLUDED.tat`,
    /** $1 id, $2 the claim's token, $3 now: the first run's start was counted now; it starts. */
    rateCounted: `UPDATE ${s}.tasks SET rate_reserved_at = $3, revision = revision + 1 WHERE id = $1 AND attempt = $2`,
    /**
     * $1 id, $2 the claim's token, $3 the start reserved, $4 now, $5 and $6 the lease the claim replaced: the claim is
     * undone (token, lease as they were) and the task waits until its start like a sleep, its start counted.
     */
    rateReserve: `
      WITH u AS (
        UPDATE ${s}.tasks t SET runnable = false, wake_at = $3, rate_reserved_at = $3, attempt = t.attempt - 1,
          lease_owner = $5, lease_until = $6, updated_at = $4, revision = t.revision + 1
        WHERE t.id = $1 AND t.attempt = $2
        RETURNING t.id
      ) SELECT u.id, ${notify('u.id', 'false', 'false')} FROM u`,
    /** $1 now: deletes rows of keys whose time is past (they mean the same as none). */
    dropPastRates: `DELETE FROM ${s}.rate_limits WHERE key IN (
      SELECT r.key FROM ${s}.rate_limits r WHERE r.tat < $1 LIMIT ${SWEPT_RATE_ROWS})`,
    rateWaitsByTool: `SELECT a.tool, count(*)::int AS n FROM ${s}.tasks a WHERE ${rateWait('a')} GROUP BY a.tool`,
  };
}
