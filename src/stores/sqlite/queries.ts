// Prepared SQL for the SQLite task store; every write after a claim is conditional on the fencing token.
import type {
  Json,
  JsonMap,
  NewTask,
  RunOutcome,
  StepAttempts,
  StepFailure,
  TaskOwner,
  TaskStatus,
} from '../../tasks/task.js';
import type { SqliteDatabase } from './database.js';
import type { InputRow, TaskRow } from './rows.js';

const NON_TERMINAL = `status IN ('working','input_required')`;
/**
 * Waiting tasks are read through tasks_wake. `+status` keeps SQLite from choosing tasks_status instead (it has no
 * statistics, and prefers an equality to a range): that read every working task and sorted them, some 25 ms per
 * claim and per look-ahead with 100,000 sleeping tasks, where the range of wake_at holds only the ones due.
 */
const WORKING = `+status = 'working'`;
/** A waiting task whose time has come: claimable like a runnable one (its lease was released when it began to wait). */
const DUE = `wake_at IS NOT NULL AND wake_at <= @now AND ${WORKING} AND (expires_at IS NULL OR expires_at > @now)`;

/** How payload columns are sealed: `seal(taskId, json)` encrypts when the task is sealed; `open` reverses it. */
export interface PayloadCodec {
  sealNew(sealed: boolean, json: string): string;
  seal(taskId: string, json: string): string;
  open(stored: string): string;
}

export function prepareQueries(db: SqliteDatabase, codec: PayloadCodec) {
  const insert = db.prepare(`
    INSERT INTO tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at, ttl_ms,
      poll_interval_ms, expires_at, replay_after_crash, client_caps, runnable, sealed, idempotency_key)
    VALUES (@id, @tenant, @principal, @tool, @args, 'working', @statusMessage, @now, @now, @ttlMs, @pollIntervalMs,
      @expiresAt, @replay, @caps, 1, @sealed, @key)
    ON CONFLICT (idempotency_key, tenant, principal, tool) WHERE idempotency_key IS NOT NULL DO NOTHING`);
  const keyed = db.prepare(
    `SELECT id, args, expires_at FROM tasks WHERE tenant = ? AND principal = ? AND tool = ? AND idempotency_key = ?`,
  );
  const releaseKey = db.prepare(`UPDATE tasks SET idempotency_key = NULL WHERE id = ?`);
  const insertAnswer = db.prepare(
    `INSERT INTO task_inputs (task_id, key, request, answer, asked_at, answered_at) VALUES (?, ?, NULL, ?, ?, ?)`,
  );
  // Only what snapshots and owner writes need (arguments and capabilities stay on disk).
  const getOwned = db.prepare(
    `SELECT id, status, status_message, created_at, updated_at, ttl_ms, poll_interval_ms, expires_at, result, error,
       lease_owner, lease_until FROM tasks WHERE id = ? AND tenant = ? AND principal = ?`,
  );
  const outstanding = db.prepare(
    `SELECT key, request, answer FROM task_inputs WHERE task_id = ? AND answer IS NULL AND superseded = 0 ORDER BY asked_at, key`,
  );
  const nextRunnable = db.prepare(`
    SELECT id, lease_owner, created_at FROM tasks
    WHERE runnable = 1 AND (lease_owner IS NULL OR lease_until < @now) AND (expires_at IS NULL OR expires_at > @now)
    ORDER BY created_at LIMIT 1`);
  const nextDue = db.prepare(
    `SELECT id, lease_owner, created_at FROM tasks WHERE ${DUE} ORDER BY wake_at LIMIT 1`,
  );
  const takeLease = db.prepare(`
    UPDATE tasks SET lease_owner = ?, lease_until = ?, attempt = attempt + 1, runnable = 1, wake_at = NULL
    WHERE id = ? RETURNING *`);
  const stepAttempts = db.prepare(
    `SELECT name, failed, last_failure FROM task_step_attempts WHERE task_id = ?`,
  );
  const putStepFailure = db.prepare(`
    INSERT INTO task_step_attempts (task_id, name, failed, last_failure, updated_at) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (task_id, name) DO UPDATE SET failed = excluded.failed, last_failure = excluded.last_failure,
      updated_at = excluded.updated_at`);
  const nextWake = db
    .prepare(
      `SELECT wake_at FROM tasks WHERE wake_at IS NOT NULL AND wake_at > ? AND ${WORKING} ORDER BY wake_at LIMIT 1`,
    )
    .pluck();
  const steps = db.prepare(`SELECT name, value FROM task_steps WHERE task_id = ?`);
  const answers = db.prepare(`SELECT key, answer FROM task_inputs WHERE task_id = ? AND answer IS NOT NULL`);
  const askedKeys = db.prepare(`SELECT key FROM task_inputs WHERE task_id = ?`);
  const renew = db.prepare(`
    UPDATE tasks SET lease_until = ? WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL
    RETURNING cancel_requested`);
  const holds = db.prepare(
    `SELECT 1 FROM tasks WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL`,
  );
  const putStep = db.prepare(`INSERT OR REPLACE INTO task_steps (task_id, name, value) VALUES (?, ?, ?)`);
  const setMessage = db.prepare(`
    UPDATE tasks SET status_message = ?, updated_at = ?
    WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL`);
  const terminal = db.prepare(`
    UPDATE tasks SET status = @status, result = @result, error = @error, failure = @failure,
      status_message = COALESCE(@message, status_message), updated_at = @now,
      runnable = 0, lease_owner = NULL, lease_until = NULL, wake_at = NULL
    WHERE id = @id AND attempt = @token AND status = 'working' AND lease_owner IS NOT NULL`);
  // Waits without a lease until @until; a cancel requested during the run ends the task cancelled instead.
  const wait = db.prepare(`
    UPDATE tasks SET
      status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE status END,
      status_message = CASE WHEN cancel_requested = 1 THEN 'Task was cancelled.' ELSE @message END,
      wake_at = CASE WHEN cancel_requested = 1 THEN NULL ELSE @until END,
      updated_at = @now, runnable = 0, lease_owner = NULL, lease_until = NULL
    WHERE id = @id AND attempt = @token AND status = 'working' AND lease_owner IS NOT NULL`);
  const suspend = db.prepare(`
    UPDATE tasks SET
      status = CASE WHEN cancel_requested = 1 THEN 'cancelled' ELSE 'input_required' END,
      status_message = COALESCE(@message, status_message), updated_at = @now,
      runnable = 0, lease_owner = NULL, lease_until = NULL
    WHERE id = @id AND attempt = @token AND status = 'working' AND lease_owner IS NOT NULL
    RETURNING status`);
  const ask = db.prepare(
    `INSERT INTO task_inputs (task_id, key, request, asked_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (task_id, key) DO UPDATE SET superseded = 0 WHERE answer IS NULL`,
  );
  const supersede = db.prepare(
    `UPDATE task_inputs SET superseded = 1 WHERE task_id = ? AND answer IS NULL AND superseded = 0 AND key NOT IN (SELECT value FROM json_each(?))`,
  );
  const release = db.prepare(`
    UPDATE tasks SET lease_owner = NULL, lease_until = NULL
    WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL`);
  const answerInput = db.prepare(`
    UPDATE task_inputs SET answer = ?, answered_at = ? WHERE task_id = ? AND key = ? AND answer IS NULL AND superseded = 0`);
  const touchAfterAnswer = db.prepare(`
    UPDATE tasks SET updated_at = ?,
      status = CASE WHEN ? THEN 'working' ELSE status END,
      runnable = CASE WHEN ? THEN 1 ELSE runnable END
    WHERE id = ?`);
  const flagCancel = db.prepare(`UPDATE tasks SET cancel_requested = 1 WHERE id = ?`);
  const cancelNow = db.prepare(`
    UPDATE tasks SET status = 'cancelled', cancel_requested = 1, runnable = 0, lease_owner = NULL, lease_until = NULL,
      wake_at = NULL, updated_at = ? WHERE id = ? AND ${NON_TERMINAL}`);
  // The sweep every few seconds: through the index of unfinished tasks by expiry, not tasks_status (every working
  // task, sleeping ones included) nor tasks_expiry (every finished task awaiting purge).
  const expire = db.prepare(`
    UPDATE tasks INDEXED BY tasks_live_expiry SET status = 'failed', error = ?, status_message = 'Task expired before it finished.', updated_at = ?,
      runnable = 0, lease_owner = NULL, lease_until = NULL, wake_at = NULL
    WHERE expires_at IS NOT NULL AND expires_at <= ? AND ${NON_TERMINAL} RETURNING id`);
  const purge = db.prepare(`DELETE FROM tasks WHERE expires_at IS NOT NULL AND expires_at <= ?`);
  const logEvent = db.prepare(
    `INSERT INTO task_events (task_id, runnable, cancel, origin, at) VALUES (?, ?, ?, ?, ?)`,
  );
  const eventsAfter = db.prepare(
    `SELECT seq, task_id, runnable, cancel FROM task_events WHERE seq > ? AND origin != ? ORDER BY seq LIMIT 10000`,
  );
  const maxEventSeq = db.prepare(`SELECT coalesce(max(seq), 0) FROM task_events`).pluck();
  const pruneEvents = db.prepare(`DELETE FROM task_events WHERE at < ?`);
  // One statement, one snapshot. Each count reads a range of tasks_status (or of tasks_runnable), never the table.
  const stats = db.prepare(`
    SELECT
      (SELECT count(*) FROM tasks WHERE status = 'working') AS working,
      (SELECT count(*) FROM tasks WHERE status = 'input_required') AS input_required,
      (SELECT count(*) FROM tasks WHERE status = 'completed') AS completed,
      (SELECT count(*) FROM tasks WHERE status = 'failed') AS failed,
      (SELECT count(*) FROM tasks WHERE status = 'cancelled') AS cancelled,
      (SELECT count(*) FROM tasks WHERE runnable = 1 AND (lease_owner IS NULL OR lease_until < @now)
        AND (expires_at IS NULL OR expires_at > @now)) + (SELECT count(*) FROM tasks WHERE ${DUE}) AS runnable`);
  const isSealed = db.prepare(`SELECT sealed FROM tasks WHERE id = ?`).pluck();
  // Per creation (the quota): only the owner's unfinished tasks, never the owner's whole history (tasks_owner_created).
  const countActive = db
    .prepare(
      `SELECT count(*) FROM tasks INDEXED BY tasks_owner_active
       WHERE tenant = ? AND principal = ? AND status IN ('working','input_required')`,
    )
    .pluck();
  const countRunnable = db.prepare(
    `SELECT (SELECT count(*) FROM tasks WHERE runnable = 1 AND (lease_owner IS NULL OR lease_until < @now)
       AND (expires_at IS NULL OR expires_at > @now)) + (SELECT count(*) FROM tasks WHERE ${DUE}) AS n`,
  );
  const inspectTask = db.prepare(`SELECT * FROM tasks WHERE id = ?`);
  const stepNames = db.prepare(`SELECT name FROM task_steps WHERE task_id = ?`).pluck();

  return {
    /** False when the task's idempotency key is held by another task (then nothing is inserted). */
    insertTask(task: NewTask, sealed: boolean): boolean {
      const { changes } = insert.run({
        sealed: sealed ? 1 : 0,
        id: task.id,
        tenant: task.owner.tenant,
        principal: task.owner.principal,
        tool: task.tool,
        args: codec.sealNew(sealed, JSON.stringify(task.args)),
        statusMessage: task.statusMessage ?? null,
        now: task.createdAt,
        ttlMs: task.ttlMs,
        pollIntervalMs: task.pollIntervalMs ?? null,
        expiresAt: task.ttlMs === null ? null : task.createdAt + task.ttlMs,
        replay: task.replayAfterCrash ? 1 : 0,
        caps: JSON.stringify(task.clientCapabilities),
        key: task.idempotencyKey ?? null,
      });
      if (changes === 0) return false;
      for (const [key, value] of Object.entries(task.answers)) {
        insertAnswer.run(
          task.id,
          key,
          codec.sealNew(sealed, JSON.stringify(value)),
          task.createdAt,
          task.createdAt,
        );
      }
      return true;
    },
    keyed: (owner: TaskOwner, tool: string, key: string) =>
      keyed.get(owner.tenant, owner.principal, tool, key) as
        { id: string; args: string; expires_at: number | null } | undefined,
    releaseKey: (id: string) => releaseKey.run(id),
    getOwned: (id: string, owner: TaskOwner) =>
      getOwned.get(id, owner.tenant, owner.principal) as TaskRow | undefined,
    outstandingInputs: (id: string) => outstanding.all(id) as InputRow[],
    /** The oldest task (by creation) that is runnable, or whose wait is over. */
    nextClaimable(now: number): { id: string; lease_owner: string | null } | undefined {
      type Candidate = { id: string; lease_owner: string | null; created_at: number } | undefined;
      const ready = nextRunnable.get({ now }) as Candidate;
      const due = nextDue.get({ now }) as Candidate;
      if (ready === undefined || due === undefined) return ready ?? due;
      return due.created_at < ready.created_at ? due : ready;
    },
    takeLease: (id: string, owner: string, until: number) => takeLease.get(owner, until, id) as TaskRow,
    steps(id: string): Record<string, Json> {
      const out: Record<string, Json> = {};
      for (const r of steps.all(id) as { name: string; value: string }[])
        out[r.name] = JSON.parse(codec.open(r.value)) as Json;
      return out;
    },
    answers(id: string): Record<string, JsonMap> {
      const out: Record<string, JsonMap> = {};
      for (const r of answers.all(id) as { key: string; answer: string }[])
        out[r.key] = JSON.parse(codec.open(r.answer)) as JsonMap;
      return out;
    },
    askedKeys: (id: string) => (askedKeys.all(id) as { key: string }[]).map((r) => r.key),
    stepAttempts(id: string): Record<string, StepAttempts> {
      const out: Record<string, StepAttempts> = {};
      for (const r of stepAttempts.all(id) as { name: string; failed: number; last_failure: string }[])
        out[r.name] = { failed: r.failed, last: JSON.parse(codec.open(r.last_failure)) as StepFailure };
      return out;
    },
    putStepFailure: (id: string, name: string, failure: StepFailure, now: number) =>
      putStepFailure.run(id, name, failure.attempt, codec.seal(id, JSON.stringify(failure)), now),
    nextWake: (now: number) => nextWake.get(now) as number | undefined,
    inspect: (id: string) => inspectTask.get(id) as TaskRow | undefined,
    stepNames: (id: string) => stepNames.all(id) as string[],
    renew: (id: string, token: number, until: number) =>
      renew.get(until, id, token) as { cancel_requested: number } | undefined,
    holds: (id: string, token: number) => holds.get(id, token) !== undefined,
    putStep: (id: string, name: string, value: string) => putStep.run(id, name, codec.seal(id, value)),
    setStatusMessage: (id: string, token: number, message: string, now: number) =>
      setMessage.run(message, now, id, token).changes === 1,
    finish(id: string, token: number, outcome: RunOutcome, now: number): boolean {
      const base = { id, token, now, result: null, error: null, message: null, failure: null } as Record<
        string,
        unknown
      >;
      const failureOf = (o: { failure?: unknown }): string | null =>
        o.failure === undefined ? null : codec.seal(id, JSON.stringify(o.failure));
      switch (outcome.kind) {
        case 'completed':
          return (
            terminal.run({
              ...base,
              status: 'completed',
              result: codec.seal(id, JSON.stringify(outcome.result)),
              message: outcome.statusMessage ?? null,
              failure: failureOf(outcome),
            }).changes === 1
          );
        case 'failed':
          return (
            terminal.run({
              ...base,
              status: 'failed',
              error: codec.seal(id, JSON.stringify(outcome.error)),
              message: outcome.statusMessage,
              failure: failureOf(outcome),
            }).changes === 1
          );
        case 'waiting':
          return (
            wait.run({ id, token, now, until: outcome.until, message: outcome.statusMessage }).changes === 1
          );
        case 'cancelled':
          return terminal.run({ ...base, status: 'cancelled', message: 'Task was cancelled.' }).changes === 1;
        case 'released':
          return release.run(id, token).changes === 1;
        case 'input_required': {
          const row = suspend.get({ ...base, message: outcome.statusMessage ?? null }) as
            { status: string } | undefined;
          if (row === undefined) return false;
          for (const [key, request] of Object.entries(outcome.requests))
            ask.run(id, key, codec.seal(id, JSON.stringify(request)), now);
          supersede.run(id, JSON.stringify(Object.keys(outcome.requests)));
          return true;
        }
      }
    },
    answerInput: (id: string, key: string, value: string, now: number) =>
      answerInput.run(codec.seal(id, value), now, id, key).changes,
    touchAfterAnswer: (id: string, resumed: boolean, now: number) =>
      touchAfterAnswer.run(now, resumed ? 1 : 0, resumed ? 1 : 0, id),
    flagCancel: (id: string) => flagCancel.run(id),
    cancelNow: (id: string, now: number) => cancelNow.run(now, id),
    expire: (now: number, error: string) =>
      (expire.all(error, now, now) as { id: string }[]).map((r) => r.id),
    purge: (cutoff: number) => purge.run(cutoff).changes,
    logEvent: (taskId: string, runnable: boolean, cancel: boolean, origin: string, at: number) =>
      logEvent.run(taskId, runnable ? 1 : 0, cancel ? 1 : 0, origin, at),
    eventsAfter: (seq: number, origin: string) =>
      eventsAfter.all(seq, origin) as { seq: number; task_id: string; runnable: number; cancel: number }[],
    maxEventSeq: () => maxEventSeq.get() as number,
    pruneEvents: (before: number) => pruneEvents.run(before),
    stats: (now: number) => stats.get({ now }) as Record<TaskStatus | 'runnable', number>,
    isSealed: (id: string) => isSealed.get(id) === 1,
    countActive: (owner: TaskOwner) => countActive.get(owner.tenant, owner.principal) as number,
    countRunnable: (now: number) => (countRunnable.get({ now }) as { n: number }).n,
  };
}

export type Queries = ReturnType<typeof prepareQueries>;
