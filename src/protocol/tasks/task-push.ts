// The pushes of one `taskIds` subscription: at most one snapshot in flight per task; changes that arrive meanwhile
// only mark it dirty, so a slow client receives the latest state, never a growing queue.
import type { CommittedTask, TaskChange } from '../../tasks/store.js';
import type { LookupMiss, TaskSnapshot } from '../../tasks/task.js';
import type { JsonObject } from '../types.js';
import { toDetailedTask } from './task-wire.js';

/** Per subscribed task: at most one snapshot in flight, and what the next one must come from. */
interface PushState {
  sending: boolean;
  /** A change arrived while a snapshot was in flight: send again. */
  dirty: boolean;
  /** A change without its snapshot arrived: the next snapshot is read from the store. */
  needsRead: boolean;
  /** The newest snapshot a change carried, not sent yet. */
  carried: CommittedTask | undefined;
  /** The revision of the last snapshot sent, if the store numbers them. */
  sentRevision: number | undefined;
}

/** Up to this many watched tasks are kept in one array and looked for one by one; more in a map. */
const FEW = 16;

/**
 * The watched tasks of one subscription and their push states: a task's state is kept only while something is to
 * be sent; in between, only the revision last sent (an open stream watching tasks that do not change holds one
 * entry per task). A few tasks are kept as one array (each id followed by its revision), which holds a fraction of
 * what a map of them would.
 */
class PushStates {
  /** Each watched task followed by the revision last sent (if the store numbers them), for FEW tasks or fewer. */
  private readonly few: Array<string | number | undefined> | undefined;
  /** Each watched task with the revision last sent, for more than FEW. */
  private readonly many: Map<string, number | undefined> | undefined;
  private busy: Map<string, PushState> | undefined;

  constructor(ids: readonly string[]) {
    if (ids.length > FEW) {
      this.many = new Map();
      for (const id of ids) this.many.set(id, undefined);
      return;
    }
    // Exactly the room needed: an array that grows by pushes keeps spare room.
    const few = new Array<string | number | undefined>(ids.length * 2);
    for (let i = 0; i < ids.length; i++) {
      few[2 * i] = ids[i];
      few[2 * i + 1] = undefined;
    }
    this.few = few;
  }

  has(id: string): boolean {
    // A revision is never a string: only an id matches.
    return this.many === undefined ? this.few!.indexOf(id) !== -1 : this.many.has(id);
  }

  ids(): string[] {
    if (this.many !== undefined) return [...this.many.keys()];
    const few = this.few!;
    const ids: string[] = [];
    for (let i = 0; i < few.length; i += 2) ids.push(few[i] as string);
    return ids;
  }

  /** The revision last sent of a watched task (undefined when none, or when it is not watched). */
  private sent(id: string): number | undefined {
    if (this.many !== undefined) return this.many.get(id);
    const few = this.few!;
    const i = few.indexOf(id);
    return i === -1 ? undefined : (few[i + 1] as number | undefined);
  }

  of(id: string): PushState {
    this.busy ??= new Map();
    let s = this.busy.get(id);
    if (s === undefined) {
      const sentRevision = this.sent(id);
      s = { sending: false, dirty: false, needsRead: false, carried: undefined, sentRevision };
      this.busy.set(id, s);
    }
    return s;
  }

  /** Drops the task's state once nothing is to be sent, keeping the revision last sent while it is watched. */
  settle(id: string, s: PushState): void {
    if (s.sending || s.dirty || s.needsRead || s.carried !== undefined) return;
    if (this.many !== undefined) {
      if (this.many.has(id)) this.many.set(id, s.sentRevision);
    } else {
      const i = this.few!.indexOf(id);
      if (i !== -1) this.few![i + 1] = s.sentRevision;
    }
    this.busy?.delete(id);
    if (this.busy?.size === 0) this.busy = undefined;
  }

  /** The task expired or was purged: nothing more will come. */
  unwatch(id: string): void {
    if (this.many !== undefined) this.many.delete(id);
    else {
      const i = this.few!.indexOf(id);
      if (i !== -1) this.few!.splice(i, 2);
    }
    this.busy?.delete(id);
  }

  clear(): void {
    this.busy = undefined;
  }
}

type Next = TaskSnapshot | LookupMiss;

/** Whether revision `a` is an earlier state of the task than `b` (only stores that number their writes can tell). */
const isBefore = (a: number | undefined, b: number | undefined): boolean =>
  a !== undefined && b !== undefined && a < b;

/**
 * Never a state older than one already sent (changes and reads can arrive out of commit order), nor a carried one
 * of the revision already sent: that state went out, or (a writer that does not bump the revision, during a rolling
 * upgrade) a later one of the same revision did.
 */
const isStale = (revision: number | undefined, last: number | undefined, carried: boolean): boolean =>
  revision !== undefined && last !== undefined && (revision < last || (carried && revision === last));

/** What the pushes of one subscription need: its owner's reads of a task, the clock, the stream. */
export interface PushDeps {
  /** Reads the task as the subscriber's owner sees it. */
  read(id: string): Promise<Next>;
  /** A read of the task that set out before a change must not serve the pushes the change causes. */
  forget(id: string): void;
  now(): number;
  whenWritable(): Promise<void>;
  send(method: string, params: JsonObject): void;
}

/**
 * The next snapshot to send: the carried one when no read is needed, else a read (or a newer carried one).
 * `carried` tells which it is.
 */
async function nextSnapshot(
  s: PushState,
  id: string,
  deps: PushDeps,
): Promise<{ snapshot: Next; carried: boolean }> {
  const carried = s.carried;
  s.carried = undefined;
  const live = carried !== undefined && (carried.expiresAt === null || carried.expiresAt > deps.now());
  const held = live ? carried.snapshot() : undefined;
  if (held !== undefined && !s.needsRead) return { snapshot: held, carried: true };
  s.needsRead = false;
  let read: Next;
  try {
    read = await deps.read(id);
  } catch (err) {
    // The store did not answer: the carried state is still one that was committed.
    if (held !== undefined) return { snapshot: held, carried: true };
    throw err;
  }
  // A read that set out before the commit of the carried snapshot is older than it.
  if (held !== undefined && typeof read !== 'string' && isBefore(read.revision, held.revision)) {
    return { snapshot: held, carried: true };
  }
  return { snapshot: read, carried: false };
}

/**
 * The pushes of the `watched` tasks; a task that expired or was purged is no longer watched. One object with its
 * methods on the prototype: an open stream holds no closures of its own for them.
 */
export class TaskPusher {
  private readonly state: PushStates;
  private stopped = false;

  constructor(
    watched: Iterable<string>,
    private readonly deps: PushDeps,
  ) {
    this.state = new PushStates(Array.isArray(watched) ? (watched as string[]) : [...watched]);
  }

  /** Sends the task's state now, or once the snapshot in flight went out. */
  push(id: string): void {
    void this.run(id);
  }

  /** Sends the state of every watched task (the subscription's first snapshots). */
  pushAll(): void {
    for (const id of this.state.ids()) void this.run(id);
  }

  /** A committed change of some task: pushed if the subscription watches it. */
  changed(change: TaskChange): void {
    if (!this.state.has(change.taskId)) return;
    this.deps.forget(change.taskId);
    const s = this.state.of(change.taskId);
    const committed = change.committed;
    // A change that carries the task as committed spares a read; one that does not needs one.
    if (committed === undefined) s.needsRead = true;
    else if (s.carried === undefined || !isBefore(committed.revision, s.carried.revision)) {
      s.carried = committed;
    }
    void this.run(change.taskId);
  }

  /** Changes committed before the feed heard them may be missing: every watched task is read again. */
  resync(): void {
    for (const id of this.state.ids()) {
      this.deps.forget(id);
      this.state.of(id).needsRead = true;
      void this.run(id);
    }
  }

  stop(): void {
    this.stopped = true;
    this.state.clear();
  }

  private async run(id: string): Promise<void> {
    const { state, deps } = this;
    const s = state.of(id);
    if (s.sending) {
      s.dirty = true;
      return;
    }
    s.sending = true;
    try {
      do {
        s.dirty = false;
        await deps.whenWritable();
        if (this.stopped) return;
        const { snapshot, carried } = await nextSnapshot(s, id, deps);
        if (this.stopped) return;
        if (typeof snapshot === 'string') {
          state.unwatch(id);
          return;
        }
        if (isStale(snapshot.revision, s.sentRevision, carried)) continue;
        s.sentRevision = snapshot.revision;
        deps.send('notifications/tasks', toDetailedTask(snapshot) as JsonObject);
      } while (s.dirty);
    } catch {
      // A store hiccup drops this event; the next change (or the client's own poll) catches up.
    } finally {
      s.sending = false;
      if (!this.stopped) state.settle(id, s);
    }
  }
}

export const createTaskPusher = (watched: Iterable<string>, deps: PushDeps): TaskPusher =>
  new TaskPusher(watched, deps);
