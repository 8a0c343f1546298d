// What the stores of this package offer besides the TaskStore port: the legacy sessions kept in the same database
// (a backend hands them to the 2025-11-25 wire), and counts their tests and the reliability suite read.
import type { OutsideEventPort } from '../tasks/events.js';
import type { SessionStore } from '../tasks/sessions.js';
import type { TaskFamily, TaskStore } from '../tasks/store.js';
import type { TaskOwner } from '../tasks/task.js';

export interface BuiltInTaskStore extends TaskStore {
  /** Sessions of the 2025-11-25 wire, in the same database. */
  readonly sessions: SessionStore;
  /** Events from outside a task (migration 29 of SQLite, 29 of PostgreSQL). */
  readonly events: OutsideEventPort;
  /** Runnable tasks waiting for a worker, waits that are due included. */
  countRunnable(now: number): Promise<number>;
  /** The bytes one owner's kept tasks store (TaskStore.storedBytes, which both stores keep). */
  storedBytes(owner: TaskOwner): Promise<number>;
  /** A task's parent and children (TaskStore.family, which both stores keep). */
  family(id: string, owner: TaskOwner): Promise<TaskFamily | undefined>;
}

/** The reads both stores implement alike (their `reads.ts`). */
export type StoreReads = Required<
  Pick<
    BuiltInTaskStore,
    | 'get'
    | 'findByIdempotencyKey'
    | 'nextWakeAt'
    | 'inspect'
    | 'countActive'
    | 'storedBytes'
    | 'stats'
    | 'countRunnable'
  >
>;
