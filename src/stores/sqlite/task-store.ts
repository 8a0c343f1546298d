// TaskStore on SQLite: conditional writes fenced by the attempt number, group-committed creation, in-process change feed.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { IdempotencyConflictError, StoreUnavailableError } from '../../tasks/errors.js';
import { sameJson } from '../../tasks/json-equal.js';
import type { PayloadCipher } from '../../tasks/payload-cipher.js';
import type {
  AnswerResult,
  CancelResult,
  ChangeFeed,
  RenewResult,
  TaskChange,
  TaskStore,
} from '../../tasks/store.js';
import type {
  ClaimedTask,
  JsonMap,
  KeyedTask,
  LookupMiss,
  NewTask,
  RunOutcome,
  TaskOwner,
  TaskSnapshot,
} from '../../tasks/task.js';
import { isTerminal, ownerKey, TASK_EXPIRED_ERROR } from '../../tasks/task.js';
import { openSqlite, type OpenSqliteOptions, type SqliteDatabase } from './database.js';
import { prepareQueries, type PayloadCodec, type Queries } from './queries.js';
import { newSnapshot, toInspection, toSnapshot, type TaskRow } from './rows.js';
import { createWriteRetry, isDataError, translate } from './write-retry.js';
import { createOwnedLister } from './list-owned.js';
import { createSqliteSessionStore } from './session-store.js';

export interface SqliteTaskStoreOptions extends OpenSqliteOptions {
  /** An already opened database (shared with other users of the file); not closed by the store. */
  db?: SqliteDatabase;
  /** Encrypts arguments, input requests and answers, steps, results and errors at rest. */
  cipher?: PayloadCipher;
  /** With a cipher: seal every task (default) or only tasks of tools marked sensitive. */
  encrypt?: 'all' | 'sensitive';
  /** How often to look for changes committed by other processes on the same file (default 100 ms). */
  crossProcessPollMs?: number;
}

const EXPIRED_ERROR = JSON.stringify(TASK_EXPIRED_ERROR);

export function createSqliteTaskStore(
  options: SqliteTaskStoreOptions,
): TaskStore & { readonly db: SqliteDatabase } {
  const ownsDb = options.db === undefined;
  const db = options.db ?? openSqlite(options);
  const cipher = options.cipher;
  const encryptAll = (options.encrypt ?? 'all') === 'all';
  const identity = (v: string): string => v;
  const codec: PayloadCodec =
    cipher === undefined
      ? { sealNew: (_s, json) => json, seal: (_id, json) => json, open: identity }
      : {
          sealNew: (sealed, json) => (sealed ? cipher.seal(json) : json),
          seal: (id, json) => (encryptAll || q.isSealed(id) ? cipher.seal(json) : json),
          open: (stored) => cipher.open(stored),
        };
  const q: Queries = prepareQueries(db, codec);
  const sealedFor = (task: NewTask): boolean =>
    cipher !== undefined && (encryptAll || task.sensitive === true);
  const events = new EventEmitter();
  events.setMaxListeners(0);
  // Changes are logged in task_events inside the writing transaction (other processes on the file read them),
  // and emitted in this process once the transaction has committed.
  const origin = randomBytes(8).toString('hex');
  type Recorded = { change: TaskChange; mode: 'both' | 'local' | 'log' };
  let txChanges: Recorded[] | undefined;
  /** Records a change: logged for other processes and/or emitted here after commit. */
  const changed = (change: TaskChange, mode: Recorded['mode'] = 'both'): void => {
    if (txChanges === undefined) throw new Error('changes are recorded inside a transaction');
    txChanges.push({ change, mode });
  };
  // Write transactions run under BEGIN IMMEDIATE; a file locked by another process is waited for asynchronously.
  let dbClosed = false;
  const retry = createWriteRetry({ deadlineMs: options.busyTimeoutMs, isClosed: () => dbClosed });
  // One transaction wrapper for every write: db.transaction() builds five functions each time it is called.
  const inTransaction = db.transaction((fn: () => unknown) => fn());
  const immediate = <T>(fn: () => T): Promise<T> => retry(() => inTransaction.immediate(fn) as T);
  const tx = async <T>(fn: () => T): Promise<T> => {
    let recorded: Recorded[] = [];
    const value = await immediate(() => {
      recorded = [];
      txChanges = recorded;
      try {
        const v = fn();
        for (const { change: c, mode } of recorded) {
          if (mode !== 'local') q.logEvent(c.taskId, c.runnable, c.cancelRequested, origin, Date.now());
        }
        return v;
      } finally {
        txChanges = undefined;
      }
    });
    for (const { change: c, mode } of recorded) if (mode !== 'log') events.emit('change', c);
    return value;
  };
  let pending: { task: NewTask; resolve: (s: TaskSnapshot) => void; reject: (e: unknown) => void }[] = [];
  let closed = false;

  type Creation = (typeof pending)[number];
  /** How one creation went inside its transaction: inserted, or the live task its idempotency key names. */
  type Created =
    { kind: 'inserted' } | { kind: 'joined'; snapshot: TaskSnapshot } | { kind: 'conflict'; id: string };

  /**
   * Inside a write transaction: inserts the task, unless its idempotency key names a live task of the owner. The
   * insert itself finds a key in use (its unique index): a new key costs no read.
   */
  const insertOrJoin = (task: NewTask): Created => {
    if (!q.insertTask(task, sealedFor(task))) {
      const key = task.idempotencyKey as string;
      const existing = q.keyed(task.owner, task.tool, key);
      if (existing === undefined) throw new Error(`task ${task.id} was not inserted`);
      if (existing.expires_at === null || existing.expires_at > task.createdAt) {
        const args = JSON.parse(codec.open(existing.args)) as JsonMap;
        if (!sameJson(args, task.args)) return { kind: 'conflict', id: existing.id };
        const row = q.getOwned(existing.id, task.owner) as TaskRow;
        return { kind: 'joined', snapshot: snapshotOf(row) };
      }
      // The key's task has expired: the key is free for a new one.
      q.releaseKey(existing.id);
      q.insertTask(task, sealedFor(task));
    }
    changed({ taskId: task.id, runnable: true, cancelRequested: false }, 'local');
    return { kind: 'inserted' };
  };
  /** Inserts a batch (inside a transaction); other processes only need to know that work arrived. */
  const insertBatch = (batch: Creation[]): Created[] => {
    const created = batch.map(({ task }) => insertOrJoin(task));
    if (created.some((c) => c.kind === 'inserted'))
      changed({ taskId: '*', runnable: true, cancelRequested: false }, 'log');
    return created;
  };
  const settleCreation = ({ task, resolve, reject }: Creation, created: Created): void => {
    if (created.kind === 'inserted') resolve(newSnapshot(task));
    else if (created.kind === 'joined') resolve(created.snapshot);
    else reject(new IdempotencyConflictError(created.id));
  };
  // Group commit: creations queued in the same turn of the event loop share one transaction (one fsync).
  const commitCreations = async (batch: Creation[]): Promise<void> => {
    try {
      const created = await tx(() => insertBatch(batch));
      batch.forEach((item, i) => settleCreation(item, created[i] as Created));
    } catch (err) {
      // The file, not a row, is the problem (locked past the deadline, disk full, I/O): the whole group fails.
      if (!isDataError(err)) {
        for (const { reject } of batch) reject(translate(err));
        return;
      }
      // One bad row must not sink its neighbours: retry each creation in its own transaction.
      for (const item of batch) {
        try {
          const [created] = await tx(() => insertBatch([item]));
          settleCreation(item, created as Created);
        } catch (rowErr) {
          item.reject(translate(rowErr));
        }
      }
    }
  };

  // Terminal snapshots never change again: polls of finished tasks are answered from memory until expiry.
  const terminal = new Map<string, { owner: string; snapshot: TaskSnapshot; expiresAt: number | null }>();
  const remember = (owner: TaskOwner, snapshot: TaskSnapshot): void => {
    if (terminal.size >= 10_000) terminal.delete(terminal.keys().next().value as string);
    const expiresAt = snapshot.ttlMs === null ? null : snapshot.createdAt + snapshot.ttlMs;
    terminal.set(snapshot.id, { owner: ownerKey(owner), snapshot, expiresAt });
  };

  // Lease writes (claim, renew) may skip the fsync: a lease lost in a power cut is simply claimed again,
  // and the next durable commit flushes it anyway.
  const relaxed = (options.synchronous ?? 'FULL') !== 'NORMAL';
  const leaseTx = <T>(fn: () => T): Promise<T> => {
    if (!relaxed) return immediate(fn);
    return retry(() => {
      db.pragma('synchronous = NORMAL');
      try {
        return inTransaction.immediate(fn) as T;
      } finally {
        db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
      }
    });
  };

  // Run endings queued in one turn of the event loop share one transaction, like creations.
  let finishing: {
    id: string;
    token: number;
    outcome: RunOutcome;
    now: number;
    resolve: (ok: boolean) => void;
    reject: (e: unknown) => void;
  }[] = [];
  type Ending = (typeof finishing)[number];
  const commitEndings = async (batch: Ending[]): Promise<void> => {
    try {
      const results = await tx(() =>
        batch.map(({ id, token, outcome, now }) => {
          const ok = q.finish(id, token, outcome, now);
          if (ok) changed({ taskId: id, runnable: outcome.kind === 'released', cancelRequested: false });
          return ok;
        }),
      );
      batch.forEach(({ resolve }, i) => resolve(results[i] === true));
    } catch (err) {
      for (const { reject } of batch) reject(translate(err));
    }
  };

  // Creations and run endings queued in the same turn share one transaction, so one fsync covers both. If that
  // shared commit fails on a row, each kind is committed on its own (creations row by row, as above); if it fails
  // on the file (locked past the deadline, full, I/O), everything in it fails.
  let flushScheduled = false;
  const flushAll = async (): Promise<void> => {
    flushScheduled = false;
    const creations = pending;
    const endings = finishing;
    pending = [];
    finishing = [];
    if (creations.length === 0 || endings.length === 0) {
      if (creations.length > 0) await commitCreations(creations);
      if (endings.length > 0) await commitEndings(endings);
      return;
    }
    let results: boolean[];
    let created: Created[];
    try {
      [created, results] = await tx(() => [
        insertBatch(creations),
        endings.map(({ id, token, outcome, now }) => {
          const ok = q.finish(id, token, outcome, now);
          if (ok) changed({ taskId: id, runnable: outcome.kind === 'released', cancelRequested: false });
          return ok;
        }),
      ]);
    } catch (err) {
      if (!isDataError(err)) {
        const reason = translate(err);
        for (const { reject } of creations) reject(reason);
        for (const { reject } of endings) reject(reason);
        return;
      }
      await commitEndings(endings);
      await commitCreations(creations);
      return;
    }
    creations.forEach((item, i) => settleCreation(item, created[i] as Created));
    endings.forEach(({ resolve }, i) => resolve(results[i] === true));
  };
  const scheduleFlush = (): void => {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(() => void flushAll());
  };

  /** Leases the next runnable task (inside a lease transaction). */
  const claimOne = (workerId: string, leaseMs: number, now: number): ClaimedTask | undefined => {
    const candidate = q.nextClaimable(now);
    if (candidate === undefined) return undefined;
    const row = q.takeLease(candidate.id, workerId, now + leaseMs);
    return {
      id: row.id,
      owner: { tenant: row.tenant, principal: row.principal },
      tool: row.tool,
      args: JSON.parse(codec.open(row.args)) as Record<string, unknown>,
      token: row.attempt,
      takenOver: candidate.lease_owner !== null,
      replayAfterCrash: row.replay_after_crash === 1,
      cancelRequested: row.cancel_requested === 1,
      clientCapabilities: JSON.parse(row.client_caps) as Record<string, unknown>,
      steps: q.steps(row.id),
      stepAttempts: q.stepAttempts(row.id),
      answers: q.answers(row.id),
      askedKeys: q.askedKeys(row.id),
    };
  };

  /** The snapshot of a row read by getOwned (with its outstanding input requests while it waits for input). */
  const snapshotOf = (row: TaskRow): TaskSnapshot =>
    toSnapshot(row, row.status === 'input_required' ? q.outstandingInputs(row.id) : [], codec.open);

  const lookup = (id: string, owner: TaskOwner, now: number): TaskRow | LookupMiss => {
    const row = q.getOwned(id, owner);
    if (row === undefined) return 'not_found';
    if (row.expires_at !== null && row.expires_at <= now) return 'expired';
    return row;
  };

  // Other processes on the same file: PRAGMA data_version moves when another connection commits; then read
  // the new task_events rows they logged. Cheap enough to check every pollMs.
  let lastSeq = q.maxEventSeq();
  let dataVersion = db.pragma('data_version', { simple: true }) as number;
  let polls = 0;
  const pollOthers = (): void => {
    try {
      const v = db.pragma('data_version', { simple: true }) as number;
      if (v !== dataVersion) {
        dataVersion = v;
        for (const e of q.eventsAfter(lastSeq, origin)) {
          lastSeq = Math.max(lastSeq, e.seq);
          events.emit('change', {
            taskId: e.task_id,
            runnable: e.runnable === 1,
            cancelRequested: e.cancel === 1,
          });
        }
        lastSeq = Math.max(lastSeq, q.maxEventSeq());
      }
      if (++polls % 600 === 0) q.pruneEvents(Date.now() - 60_000);
    } catch {
      // busy or closing: try again next tick
    }
  };
  const poller = setInterval(pollOthers, options.crossProcessPollMs ?? 100);
  poller.unref();

  const changes: ChangeFeed = {
    subscribe(listener) {
      events.on('change', listener);
      return () => events.off('change', listener);
    },
  };

  return {
    db,
    changes,
    listOwned: createOwnedLister(db, codec.open),
    sessions: createSqliteSessionStore(db),
    create(task) {
      if (closed) return Promise.reject(new StoreUnavailableError('store is closed'));
      return new Promise((resolve, reject) => {
        pending.push({ task, resolve, reject });
        scheduleFlush();
      });
    },

    async get(id, owner, now) {
      const hit = terminal.get(id);
      if (hit !== undefined && hit.owner === ownerKey(owner)) {
        if (hit.expiresAt === null || hit.expiresAt > now) return hit.snapshot;
        terminal.delete(id);
      }
      const row = lookup(id, owner, now);
      if (typeof row === 'string') return row;
      const snapshot = snapshotOf(row);
      if (isTerminal(row.status)) remember(owner, snapshot);
      return snapshot;
    },

    async findByIdempotencyKey(owner, tool, key, now): Promise<KeyedTask | undefined> {
      const keyed = q.keyed(owner, tool, key);
      if (keyed === undefined || (keyed.expires_at !== null && keyed.expires_at <= now)) return undefined;
      const row = q.getOwned(keyed.id, owner);
      if (row === undefined) return undefined;
      return { snapshot: snapshotOf(row), args: JSON.parse(codec.open(keyed.args)) as JsonMap };
    },

    async claim(workerId, leaseMs, now): Promise<ClaimedTask | undefined> {
      return leaseTx(() => claimOne(workerId, leaseMs, now));
    },

    async claimBatch(workerId, leaseMs, now, max): Promise<ClaimedTask[]> {
      return leaseTx(() => {
        const claimed: ClaimedTask[] = [];
        while (claimed.length < max) {
          const task = claimOne(workerId, leaseMs, now);
          if (task === undefined) break;
          claimed.push(task);
        }
        return claimed;
      });
    },

    async renew(id, token, leaseMs, now): Promise<RenewResult> {
      const row = await leaseTx(() => q.renew(id, token, now + leaseMs));
      return row === undefined
        ? { held: false, cancelRequested: false }
        : { held: true, cancelRequested: row.cancel_requested === 1 };
    },

    async saveStep(id, token, name, value, now) {
      return immediate(() => {
        if (!q.holds(id, token)) return false;
        q.putStep(id, name, JSON.stringify(value));
        void now;
        return true;
      });
    },

    async saveStepFailure(id, token, name, failure, now) {
      return immediate(() => {
        if (!q.holds(id, token)) return false;
        q.putStepFailure(id, name, failure, now);
        return true;
      });
    },

    async nextWakeAt(now) {
      return q.nextWake(now);
    },

    async inspect(id) {
      const row = q.inspect(id);
      if (row === undefined) return undefined;
      return toInspection(row, q.stepNames(id), q.stepAttempts(id), codec.open);
    },

    async setStatusMessage(id, token, message, now) {
      return tx(() => {
        const ok = q.setStatusMessage(id, token, message, now);
        if (ok) changed({ taskId: id, runnable: false, cancelRequested: false });
        return ok;
      });
    },

    async finish(id, token, outcome: RunOutcome, now) {
      if (closed) return Promise.reject(new StoreUnavailableError('store is closed'));
      return new Promise<boolean>((resolve, reject) => {
        finishing.push({ id, token, outcome, now, resolve, reject });
        scheduleFlush();
      });
    },

    async answer(id, owner, responses, now): Promise<AnswerResult> {
      return tx((): AnswerResult => {
        const row = lookup(id, owner, now);
        if (typeof row === 'string') return { ok: false, miss: row };
        if (row.status !== 'input_required') return { ok: true, resumed: false };
        let answered = 0;
        for (const [key, value] of Object.entries(responses))
          answered += q.answerInput(id, key, JSON.stringify(value), now);
        if (answered === 0) return { ok: true, resumed: false };
        const resumed = q.outstandingInputs(id).length === 0;
        q.touchAfterAnswer(id, resumed, now);
        changed({ taskId: id, runnable: resumed, cancelRequested: false });
        return { ok: true, resumed };
      });
    },

    async requestCancel(id, owner, now): Promise<CancelResult> {
      return tx((): CancelResult => {
        const row = lookup(id, owner, now);
        if (typeof row === 'string') return { ok: false, miss: row };
        if (isTerminal(row.status)) {
          return { ok: true, cancelledNow: false, running: false };
        }
        const running = row.lease_owner !== null && (row.lease_until ?? 0) > now;
        changed({ taskId: id, runnable: false, cancelRequested: true });
        if (running) {
          q.flagCancel(id);
          return { ok: true, cancelledNow: false, running: true };
        }
        q.cancelNow(id, now);
        return { ok: true, cancelledNow: true, running: false };
      });
    },

    async expire(now) {
      return tx(() => {
        const ids = q.expire(now, EXPIRED_ERROR);
        for (const taskId of ids) changed({ taskId, runnable: false, cancelRequested: true });
        return ids.length;
      });
    },

    async purge(now, graceMs) {
      // Purging removes only tasks that expired; the cache never answers those (get checks the expiry), so it
      // keeps every snapshot still live and only lets go of the expired ones.
      for (const [id, entry] of terminal) {
        if (entry.expiresAt !== null && entry.expiresAt <= now) terminal.delete(id);
      }
      return immediate(() => q.purge(now - graceMs));
    },

    async countActive(owner) {
      return q.countActive(owner);
    },

    async stats(now) {
      const { runnable, ...byStatus } = q.stats(now);
      return { byStatus, runnable };
    },

    async countRunnable(now) {
      return q.countRunnable(now);
    },

    async close() {
      if (closed) return;
      closed = true;
      await flushAll();
      clearInterval(poller);
      events.removeAllListeners();
      dbClosed = true;
      if (ownsDb) db.close();
    },
  };
}
