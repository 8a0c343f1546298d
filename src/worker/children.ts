// Child tasks of a run (ExecutionContext.child): started once under an id derived from the parent's, waited for
// without holding a worker, and their outcomes kept among the parent's records like a step's value.
import type { WaitKind } from '../tasks/observer.js';
import type { Clock } from '../tasks/clock.js';
import type { StoreUnavailableError } from '../tasks/errors.js';
import {
  CHILD_PREFIX,
  LeaseLostError,
  WaitPending,
  type ChildOutcome,
  type ChildStart,
  type NonDeterminismError,
} from '../tasks/execution.js';
import { childTaskId } from '../tasks/ids.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask, JsonValue, TaskSnapshot } from '../tasks/task.js';

/**
 * How long a parent waits for an unfinished child before it looks again, should no ending wake it first (a child
 * ended by an older release, or by a sweep whose process died before telling its parent): a bound, not the way
 * parents learn of their children's endings (the store makes the parent due in the child's ending write).
 */
export const CHILD_WAIT_BOUND_MS = 5 * 60_000;

/** What the child waits need of the run (worker/steps.ts RunState and the run's replay guard and records). */
export interface ChildParts {
  store: Pick<TaskStore, 'get'>;
  clock: Clock;
  task: ClaimedTask;
  run: {
    leaseLost(): boolean;
    divergence(): NonDeterminismError | undefined;
    storeError(): StoreUnavailableError | undefined;
    pendingWait(): { until: number; statusMessage: string } | undefined;
    requestWait(until: number, statusMessage: string, kind?: WaitKind, name?: string): void;
    onWriteError(err: unknown): unknown;
  };
  /** The run uses this record name (once). */
  use(name: string): void;
  /** Before doing something new under `name` (throws when recorded history remains unvisited). */
  checkNew(name: string): Promise<unknown>;
  /** Keeps a record; `take` gives room for it under maxStepsPerTask. */
  keep(what: string, name: string, value: JsonValue): Promise<void>;
  take(what: string): () => void;
}

/** The outcome of a child as it stands, or undefined while it is unfinished. */
function outcomeOf(id: string, found: TaskSnapshot | 'expired'): ChildOutcome | undefined {
  if (found === 'expired') return { taskId: id, status: 'expired' };
  switch (found.status) {
    case 'completed':
      return { taskId: id, status: 'completed', result: found.result ?? {} };
    case 'failed':
      return { taskId: id, status: 'failed', error: found.error ?? { code: -32603, message: 'failed' } };
    case 'cancelled':
      return { taskId: id, status: 'cancelled' };
    default:
      return undefined;
  }
}

export function createChildWaits(
  parts: ChildParts,
): (name: string, start: (childId: string) => Promise<ChildStart>) => Promise<ChildOutcome> {
  const { store, clock, task, run } = parts;
  /** Set once a child's wait ended the run: siblings started with it (Promise.all) still start their children. */
  let childWait = false;
  /** As steps' guard, but a wait a sibling child asked does not stop another child from starting. */
  const guard = (): void => {
    if (run.leaseLost()) throw new LeaseLostError(task.id);
    const diverged = run.divergence();
    if (diverged !== undefined) throw diverged;
    const storeError = run.storeError();
    if (storeError !== undefined) throw storeError;
    const pending = run.pendingWait();
    if (pending !== undefined && !childWait) throw new WaitPending(pending.until, pending.statusMessage);
  };
  /** The child as the store has it now (a lookup the store cannot answer ends the run, as a failed write does). */
  const look = async (id: string): Promise<TaskSnapshot | 'expired' | 'not_found'> => {
    try {
      return await store.get(id, task.owner, clock.now());
    } catch (err) {
      throw run.onWriteError(err);
    }
  };
  const keepOutcome = async (record: string, outcome: ChildOutcome): Promise<ChildOutcome> => {
    const what = `child task "${record.slice(CHILD_PREFIX.length)}"`;
    const free = parts.take(what);
    try {
      await parts.keep(what, record, outcome as unknown as JsonValue);
    } finally {
      free();
    }
    return outcome;
  };

  return async (name, start) => {
    const record = `${CHILD_PREFIX}${name}`;
    parts.use(record);
    if (Object.hasOwn(task.steps, record)) return task.steps[record] as unknown as ChildOutcome;
    guard();
    await parts.checkNew(record);
    guard();
    const id = childTaskId(task.id, name);
    let found = await look(id);
    if (found === 'not_found') {
      const started = await start(id);
      guard();
      // Refused before it existed (a quota): kept, so that every later run takes the same path.
      if (!started.started)
        return keepOutcome(record, { taskId: id, status: 'refused', error: started.error });
      found = await look(id);
      // Purged at once (a TTL of 0): nothing is left to wait for.
      if (found === 'not_found') found = 'expired';
    }
    const outcome = outcomeOf(id, found);
    if (outcome !== undefined) {
      guard();
      return keepOutcome(record, outcome);
    }
    // Unfinished: the run ends waiting; the child's ending makes the task due (the store, in its ending write).
    const until = clock.now() + CHILD_WAIT_BOUND_MS;
    const message = `Waiting for child task "${name}" (${id}).`;
    if (run.pendingWait() === undefined) childWait = true;
    run.requestWait(until, message, 'child', name);
    const pending = run.pendingWait() ?? { until, statusMessage: message };
    throw new WaitPending(pending.until, pending.statusMessage);
  };
}
