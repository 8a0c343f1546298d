// `taskIds` on subscriptions/listen: a snapshot of each owned task at once, then one per committed change.
import { isTaskIdShape } from '../../tasks/ids.js';
import type { TaskStore } from '../../tasks/store.js';
import { ownerKey, ownerOf, type LookupMiss, type TaskOwner, type TaskSnapshot } from '../../tasks/task.js';
import type { JsonObject } from '../../wire/jsonrpc.js';
import { hasExtension } from '../../wire/envelope.js';
import { TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { invalidParams, missingCapability } from '../../wire/protocol-error.js';
import type { SubscriptionExtension } from '../subscriptions.js';
import type { RequestScope } from '../scope.js';
import { TaskPusher, type PushDeps } from './task-push.js';

export const MAX_TASK_IDS = 1_000;

/** Subscribers of one task (all its owner's) share one read per change instead of one read each. */
interface SharedReads {
  read(id: string, owner: TaskOwner): Promise<TaskSnapshot | LookupMiss>;
  /** Lets the next read set out anew (a read started before a change must not serve the pushes it causes). */
  forget(id: string, owner: TaskOwner): void;
}

function createSharedReads(store: TaskStore, now: () => number): SharedReads {
  const reads = new Map<string, Promise<TaskSnapshot | LookupMiss>>();
  const keyOf = (id: string, owner: TaskOwner): string => `${id}\u0000${ownerKey(owner)}`;
  return {
    read(id, owner) {
      const key = keyOf(id, owner);
      let pending = reads.get(key);
      if (pending === undefined) {
        pending = store.get(id, owner, now());
        reads.set(key, pending);
        const forget = (): void => void reads.delete(key);
        pending.then(forget, forget);
      }
      return pending;
    },
    forget: (id, owner) => void reads.delete(keyOf(id, owner)),
  };
}

/** The requested task ids, checked: the extension declared, an array of strings, not too many. */
function requestedIds(requested: unknown, scope: RequestScope): string[] {
  if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
    throw missingCapability(`taskIds needs the ${TASKS_EXTENSION} extension in this request's capabilities`, {
      extensions: { [TASKS_EXTENSION]: {} },
    });
  }
  if (!Array.isArray(requested) || !requested.every((id) => typeof id === 'string')) {
    throw invalidParams('Invalid params: notifications.taskIds must be an array of strings');
  }
  if (requested.length > MAX_TASK_IDS) {
    throw invalidParams(`Invalid params: at most ${MAX_TASK_IDS} taskIds per subscription`);
  }
  return requested as string[];
}

/**
 * Every accepted task gets at most one snapshot in flight; changes that arrive meanwhile only mark it dirty, so a
 * slow client receives the latest state, never a growing queue.
 */
export function createTaskSubscriptions(store: TaskStore, now: () => number): SubscriptionExtension {
  const reads = createSharedReads(store, now);
  return {
    key: 'taskIds',
    async accept(requested: unknown, scope: RequestScope, send) {
      const ids = requestedIds(requested, scope);
      const owner = ownerOf(scope.auth);
      const accepted: string[] = [];
      // Only the caller's own live tasks are acknowledged; others are left out without a word.
      let looked = 0;
      for (const id of new Set(ids)) {
        if (!isTaskIdShape(id)) continue;
        // Up to 1,000 lookups: other requests get their turn every few of them.
        if (++looked % 32 === 0) await new Promise((resolve) => setImmediate(resolve));
        if (typeof (await store.get(id, owner, now())) !== 'string') accepted.push(id);
      }
      return new TaskWatch(accepted, store, reads, owner, scope.stream ?? scope, send, now);
    },
  };
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * The `taskIds` part of one open subscription: the pushes of its tasks, fed by the store's changes, reading as its
 * owner. One object with its methods on the prototype (it is the pusher's deps too): no closures per open stream
 * beyond the change feed's listener.
 */
class TaskWatch implements PushDeps {
  private readonly pusher: TaskPusher;
  private unsubscribe: (() => void) | undefined;
  /** The ids agreed to, for the acknowledgement: let go once started (the pusher has them). */
  agreed: readonly string[];

  constructor(
    agreed: string[],
    private readonly store: TaskStore,
    private readonly reads: SharedReads,
    private readonly owner: TaskOwner,
    private readonly stream: Pick<RequestScope, 'whenWritable'>,
    readonly send: (method: string, params: JsonObject) => void,
    readonly now: () => number,
  ) {
    this.agreed = agreed;
    this.pusher = new TaskPusher(agreed, this);
  }

  start(): void {
    const none = this.agreed.length === 0;
    this.agreed = NONE;
    if (none) return;
    const pusher = this.pusher;
    // Bound, not closures: they keep the pusher alone.
    this.unsubscribe = this.store.changes?.subscribe(pusher.changed.bind(pusher), pusher.resync.bind(pusher));
    pusher.pushAll();
  }

  stop(): void {
    this.pusher.stop();
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  read(id: string): Promise<TaskSnapshot | LookupMiss> {
    return this.reads.read(id, this.owner);
  }

  forget(id: string): void {
    this.reads.forget(id, this.owner);
  }

  whenWritable(): Promise<void> {
    return this.stream.whenWritable();
  }
}
