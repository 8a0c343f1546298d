// `taskIds` on subscriptions/listen: a snapshot of each owned task at once, then one per committed change.
import { isTaskIdShape } from '../../tasks/ids.js';
import type { CommittedTask, TaskStore } from '../../tasks/store.js';
import { ownerKey, ownerOf, type LookupMiss, type TaskOwner, type TaskSnapshot } from '../../tasks/task.js';
import { hasExtension } from '../../wire/envelope.js';
import { TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { invalidParams, missingCapability } from '../../wire/protocol-error.js';
import type { SubscriptionExtension } from '../subscriptions.js';
import type { RequestScope } from '../scope.js';
import type { JsonObject } from '../types.js';
import { toDetailedTask } from './task-wire.js';

export const MAX_TASK_IDS = 1_000;

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

const stateOf = (state: Map<string, PushState>, id: string): PushState => {
  let s = state.get(id);
  if (s === undefined) {
    s = { sending: false, dirty: false, needsRead: false, carried: undefined, sentRevision: undefined };
    state.set(id, s);
  }
  return s;
};

type Next = TaskSnapshot | LookupMiss;

/** Whether revision `a` is an earlier state of the task than `b` (only stores that number their writes can tell). */
const isBefore = (a: number | undefined, b: number | undefined): boolean =>
  a !== undefined && b !== undefined && a < b;

/**
 * Every accepted task gets at most one snapshot in flight; changes that arrive meanwhile only mark it dirty, so a
 * slow client receives the latest state, never a growing queue.
 */
export function createTaskSubscriptions(store: TaskStore, now: () => number): SubscriptionExtension {
  // Subscribers of one task (all its owner's) share one read per change instead of one read each.
  const reads = new Map<string, Promise<TaskSnapshot | LookupMiss>>();
  const keyOf = (id: string, owner: TaskOwner): string => `${id}\u0000${ownerKey(owner)}`;
  const readTask = (id: string, owner: TaskOwner): Promise<TaskSnapshot | LookupMiss> => {
    const key = keyOf(id, owner);
    let pending = reads.get(key);
    if (pending === undefined) {
      pending = store.get(id, owner, now());
      reads.set(key, pending);
      const forget = (): void => void reads.delete(key);
      pending.then(forget, forget);
    }
    return pending;
  };
  return {
    key: 'taskIds',
    async accept(requested: unknown, scope: RequestScope, send) {
      if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
        throw missingCapability(
          `taskIds needs the ${TASKS_EXTENSION} extension in this request's capabilities`,
          {
            extensions: { [TASKS_EXTENSION]: {} },
          },
        );
      }
      if (!Array.isArray(requested) || !requested.every((id) => typeof id === 'string')) {
        throw invalidParams('Invalid params: notifications.taskIds must be an array of strings');
      }
      if (requested.length > MAX_TASK_IDS) {
        throw invalidParams(`Invalid params: at most ${MAX_TASK_IDS} taskIds per subscription`);
      }
      const owner = ownerOf(scope.auth);
      const accepted: string[] = [];
      // Only the caller's own live tasks are acknowledged; others are left out without a word.
      for (const id of new Set(requested as string[])) {
        if (isTaskIdShape(id) && typeof (await store.get(id, owner, now())) !== 'string') accepted.push(id);
      }
      const watched = new Set(accepted);
      const state = new Map<string, PushState>();
      let stopped = false;
      let unsubscribe: (() => void) | undefined;

      /**
       * The next snapshot to send: the carried one when no read is needed, else a read (or a newer carried one).
       * `carried` tells which it is.
       */
      const next = async (s: PushState, id: string): Promise<{ snapshot: Next; carried: boolean }> => {
        const carried = s.carried;
        s.carried = undefined;
        const live = carried !== undefined && (carried.expiresAt === null || carried.expiresAt > now());
        const held = live ? carried.snapshot() : undefined;
        if (held !== undefined && !s.needsRead) return { snapshot: held, carried: true };
        s.needsRead = false;
        let read: Next;
        try {
          read = await readTask(id, owner);
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
      };

      const push = async (id: string): Promise<void> => {
        const s = stateOf(state, id);
        if (s.sending) {
          s.dirty = true;
          return;
        }
        s.sending = true;
        try {
          do {
            s.dirty = false;
            await scope.whenWritable();
            if (stopped) return;
            const { snapshot, carried } = await next(s, id);
            if (stopped) return;
            if (typeof snapshot === 'string') {
              watched.delete(id); // expired or purged: nothing more will come
              return;
            }
            // Never a state older than one already sent (changes and reads can arrive out of commit order), nor
            // a carried one of the revision already sent: that state went out, or (a writer that does not bump
            // the revision, during a rolling upgrade) a later one of the same revision did.
            const { revision } = snapshot;
            const last = s.sentRevision;
            if (
              revision !== undefined &&
              last !== undefined &&
              (revision < last || (carried && revision === last))
            )
              continue;
            s.sentRevision = revision;
            send('notifications/tasks', toDetailedTask(snapshot) as JsonObject);
          } while (s.dirty);
        } catch {
          // A store hiccup drops this event; the next change (or the client's own poll) catches up.
        } finally {
          s.sending = false;
        }
      };

      return {
        agreed: accepted,
        start() {
          if (accepted.length === 0) return;
          unsubscribe = store.changes?.subscribe(
            (change) => {
              if (!watched.has(change.taskId)) return;
              // A read started before this change must not be shared with pushes caused by it.
              reads.delete(keyOf(change.taskId, owner));
              const s = stateOf(state, change.taskId);
              const committed = change.committed;
              // A change that carries the task as committed spares a read; one that does not needs one.
              if (committed === undefined) s.needsRead = true;
              else if (s.carried === undefined || !isBefore(committed.revision, s.carried.revision)) {
                s.carried = committed;
              }
              void push(change.taskId);
            },
            () => {
              // Changes committed before the feed heard them may be missing: every watched task is read again.
              for (const id of watched) {
                reads.delete(keyOf(id, owner));
                stateOf(state, id).needsRead = true;
                void push(id);
              }
            },
          );
          for (const id of accepted) void push(id);
        },
        stop() {
          stopped = true;
          unsubscribe?.();
          state.clear();
        },
      };
    },
  };
}
