// The SQLite store's change feed. Changes are logged in task_events inside the writing transaction (other processes
// on the file read them), and emitted in this process once the transaction has committed.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { ChangeFeed, TaskChange } from '../../tasks/store.js';
import type { SqliteDatabase } from './database.js';
import type { Queries } from './queries.js';

/** Where a change goes: logged for other processes and emitted here (both), or only one of the two. */
export type ChangeMode = 'both' | 'local' | 'log';
export type RecordedChange = { change: TaskChange; mode: ChangeMode };

export interface ChangeLog {
  readonly changes: ChangeFeed;
  /** Records a change of the running transaction. */
  changed(change: TaskChange, mode?: ChangeMode): void;
  /** Inside a transaction: runs `write`, recording its changes into `into`, and logs them for other processes. */
  capture<T>(write: () => T, into: RecordedChange[]): T;
  /** After the commit: emits the changes recorded in this process. */
  emit(recorded: readonly RecordedChange[]): void;
  close(): void;
}

export function createChangeLog(db: SqliteDatabase, q: Queries, pollMs = 100): ChangeLog {
  const events = new EventEmitter();
  events.setMaxListeners(0);
  // This process's id in the log, so that it skips its own rows.
  const origin = randomBytes(8).toString('hex');
  let txChanges: RecordedChange[] | undefined;
  const poller = setInterval(pollOthers(db, q, origin, events), pollMs);
  poller.unref();
  return {
    changes: {
      subscribe(listener) {
        events.on('change', listener);
        return () => events.off('change', listener);
      },
    },
    changed(change, mode = 'both') {
      if (txChanges === undefined) throw new Error('changes are recorded inside a transaction');
      txChanges.push({ change, mode });
    },
    capture(write, into) {
      txChanges = into;
      try {
        const v = write();
        for (const { change: c, mode } of into) {
          if (mode !== 'local') q.logEvent(c.taskId, c.runnable, c.cancelRequested, origin, Date.now());
        }
        return v;
      } finally {
        txChanges = undefined;
      }
    },
    emit(recorded) {
      for (const { change, mode } of recorded) if (mode !== 'log') events.emit('change', change);
    },
    close() {
      clearInterval(poller);
      events.removeAllListeners();
    },
  };
}

/**
 * Other processes on the same file: PRAGMA data_version moves when another connection commits; then read the new
 * task_events rows they logged. Cheap enough to check every pollMs.
 */
function pollOthers(db: SqliteDatabase, q: Queries, origin: string, events: EventEmitter): () => void {
  let lastSeq = q.maxEventSeq();
  // Prepared once: db.pragma() prepares its statement on every call.
  const version = db.prepare('PRAGMA data_version').pluck();
  let dataVersion = version.get() as number;
  let polls = 0;
  return () => {
    try {
      const v = version.get() as number;
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
}
