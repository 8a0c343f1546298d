// Prepared SQL of the SQLite task store. How a run ends: terminal, waiting, released or suspended for input, each
// conditional on the run's token (the first ending wins).
import { isToolErrorResult, type RunOutcome } from '../../../tasks/task.js';
import type { PayloadCodec } from '../codec.js';
import type { SqliteDatabase } from '../database.js';
import { errorOutcomeOf } from '../../../tasks/error-outcome.js';
import { sealedAt, sealStatus } from '../../payload-sealing.js';

/**
 * What every ending returns besides its own columns: whether the task has a concurrency key (its run may hold a slot
 * to free) and a parent (to be told the child ended). Both are set at creation and never change.
 */
const TIES = 'concurrency_key IS NOT NULL AS keyed, parent_id IS NOT NULL AS child';

interface TiesRow {
  keyed: 0 | 1;
  child: 0 | 1;
}

/**
 * How a run ended: `due` when it began a wait that a child's ending made due at once; `keyed` and `child` as TIES
 * says, so that the ending frees a slot and wakes a parent only when there can be one.
 */
export interface Ended {
  due: boolean;
  keyed: boolean;
  child: boolean;
}

const endedOf = (row: TiesRow | undefined, due = false): Ended | undefined =>
  row === undefined ? undefined : { due, keyed: row.keyed === 1, child: row.child === 1 };

function prepareEndingStatements(db: SqliteDatabase) {
  const terminal = db.prepare(`
    UPDATE tasks SET status = @status, result = @result, error = @error, failure = @failure,
      tool_error = @toolError, error_outcome = @errorOutcome, status_message = COALESCE(@message, status_message), updated_at = @now,
      runnable = 0, lease_owner = NULL, lease_until = NULL, wake_at = NULL
    WHERE id = @id AND attempt = @token AND status = 'working' AND lease_owner IS NOT NULL
    RETURNING ${TIES}`);
  // Waits without a lease until @until; a cancel requested during the run ends the task cancelled instead. A child
  // that ended during the run (child_ended, migration 28) or an event it waits for that arrived during the run
  // (outside-events.ts) ends the wait at once: the run may have looked at it before.
  const wait = db.prepare(`
    UPDATE tasks SET
      status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE status END,
      status_message = CASE WHEN cancel_requested = 1 THEN 'Task was cancelled.' ELSE @message END,
      wake_at = CASE WHEN cancel_requested = 1 THEN NULL
        WHEN child_ended = 1
          OR EXISTS (SELECT 1 FROM outside_events e WHERE e.task_id = tasks.id AND e.state = 'arrived')
          THEN min(@until, @now)
        ELSE @until END,
      child_ended = NULL, updated_at = @now, runnable = 0, lease_owner = NULL, lease_until = NULL
    WHERE id = @id AND attempt = @token AND status = 'working' AND lease_owner IS NOT NULL
    RETURNING wake_at, ${TIES}`);
  const suspend = db.prepare(`
    UPDATE tasks SET
      status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE 'input_required' END,
      status_message = CASE WHEN cancel_requested = 1 THEN 'Task was cancelled.'
        ELSE COALESCE(@message, status_message) END, updated_at = @now,
      runnable = 0, lease_owner = NULL, lease_until = NULL
    WHERE id = @id AND attempt = @token AND status = 'working' AND lease_owner IS NOT NULL
    RETURNING status, ${TIES}`);
  const ask = db.prepare(
    `INSERT INTO task_inputs (task_id, key, request, asked_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (task_id, key) DO UPDATE SET superseded = 0 WHERE answer IS NULL`,
  );
  const supersede = db.prepare(
    `UPDATE task_inputs SET superseded = 1 WHERE task_id = ? AND answer IS NULL AND superseded = 0 AND key NOT IN (SELECT value FROM json_each(?))`,
  );
  const release = db.prepare(`
    UPDATE tasks SET lease_owner = NULL, lease_until = NULL
    WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL
    RETURNING ${TIES}`);
  return { terminal, wait, suspend, ask, supersede, release };
}

type EndingStatements = ReturnType<typeof prepareEndingStatements>;

/** A wait begun, due at once when a child ended during the run; undefined when refused. */
function waitRun(
  s: EndingStatements,
  params: { id: string; token: number; now: number; until: number; message: string | null },
): Ended | undefined {
  const row = s.wait.get(params) as (TiesRow & { wake_at: number | null }) | undefined;
  if (row === undefined) return undefined;
  const { now, until } = params;
  return endedOf(row, row.wake_at !== null && row.wake_at <= now && row.wake_at < until);
}

/** Ends the run holding `token` (inside the caller's transaction); undefined when the run no longer holds the task. */
function finishRun(
  s: EndingStatements,
  codec: PayloadCodec,
  id: string,
  token: number,
  outcome: RunOutcome,
  now: number,
): Ended | undefined {
  const terminal = (params: Record<string, unknown>): Ended | undefined =>
    endedOf(s.terminal.get(params) as TiesRow | undefined);
  const base = {
    id,
    token,
    now,
    result: null,
    error: null,
    message: null,
    failure: null,
    toolError: 0,
    errorOutcome: null,
  } as Record<string, unknown>;
  const failureOf = (o: { failure?: unknown }): string | null =>
    o.failure === undefined ? null : codec.seal(id, JSON.stringify(o.failure), sealedAt('tasks.failure', id));
  // A status message may quote an error: sealed with the task's payloads.
  const status = (text: string | null | undefined): string | null =>
    text === null || text === undefined ? null : sealStatus(codec, codec.sealsTask(id), id, text);
  switch (outcome.kind) {
    case 'completed':
      return terminal({
        ...base,
        status: 'completed',
        result: codec.seal(id, JSON.stringify(outcome.result), sealedAt('tasks.result', id)),
        // Known here, before the result is sealed: operators find tool errors without opening results.
        toolError: isToolErrorResult(outcome.result) ? 1 : 0,
        message: status(outcome.statusMessage),
        failure: failureOf(outcome),
      });
    case 'failed':
      return terminal({
        ...base,
        status: 'failed',
        error: codec.seal(id, JSON.stringify(outcome.error), sealedAt('tasks.error', id)),
        // Known here, before the error is sealed: operators find outcome-unknown calls without opening errors.
        errorOutcome: errorOutcomeOf(outcome.error),
        message: status(outcome.statusMessage),
        failure: failureOf(outcome),
      });
    case 'waiting':
      return waitRun(s, { id, token, now, until: outcome.until, message: status(outcome.statusMessage) });
    case 'cancelled':
      return terminal({ ...base, status: 'cancelled', message: 'Task was cancelled.' });
    case 'released':
      return endedOf(s.release.get(id, token) as TiesRow | undefined);
    case 'input_required': {
      const row = s.suspend.get({ ...base, message: status(outcome.statusMessage) }) as
        (TiesRow & { status: string }) | undefined;
      if (row === undefined) return undefined;
      for (const [key, request] of Object.entries(outcome.requests))
        s.ask.run(
          id,
          key,
          codec.seal(id, JSON.stringify(request), sealedAt('task_inputs.request', id, key)),
          now,
        );
      s.supersede.run(id, JSON.stringify(Object.keys(outcome.requests)));
      return endedOf(row);
    }
  }
}

export function prepareEndingQueries(db: SqliteDatabase, codec: PayloadCodec) {
  const statements = prepareEndingStatements(db);
  return {
    finish: (id: string, token: number, outcome: RunOutcome, now: number): Ended | undefined =>
      finishRun(statements, codec, id, token, outcome, now),
  };
}
