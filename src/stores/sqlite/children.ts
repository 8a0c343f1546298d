// Child tasks on SQLite (migration 28): a child's ending wakes its parent, and a cancel of a parent reaches its
// children, each inside the transaction of the write that caused it.
import type { TaskStore } from '../../tasks/store.js';
import type { StoreContext } from './context.js';

/** Task `id` ended (inside its ending transaction): its parent, if one waits, is due now; a change says so. */
export function childEnded({ q, log }: StoreContext, id: string, now: number): void {
  const parent = q.wakeParent(id, now);
  if (parent?.due === true) log.changed({ taskId: parent.id, runnable: true, cancelRequested: false });
}

/**
 * Cancels the unfinished children of task `id` not detached, and theirs (inside the parent's cancel transaction): a
 * running one is asked to stop, any other ends cancelled now.
 */
export function cancelChildren(ctx: StoreContext, id: string, now: number): void {
  const { q, log } = ctx;
  for (const child of q.attachedDescendants(id)) {
    const running = child.lease_owner !== null && (child.lease_until ?? 0) > now;
    log.changed({ taskId: child.id, runnable: false, cancelRequested: true });
    if (running) q.flagCancel(child.id);
    else q.cancelNow(child.id, now);
  }
}

/** A task's parent and children, as its owner sees them. */
export function familyReads({ q }: StoreContext): Required<Pick<TaskStore, 'family'>> {
  return { family: async (id, owner) => q.family(id, owner) };
}
