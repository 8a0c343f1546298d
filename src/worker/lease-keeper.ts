// The leases of a worker's runs, kept by one heartbeat and one change subscription for all of them: a run costs a map
// entry, not a timer and a subscriber each (every change would otherwise be handed to every running task).
import type { TaskStore } from '../tasks/store.js';

/** One run's lease, as the keeper sees it. */
export interface HeldLease {
  readonly taskId: string;
  /** Renews the lease now (a renewal already under way asks for another after it). */
  renew(): void;
}

export interface LeaseKeeper {
  /** Keeps `lease` renewed until the function returned is called. */
  hold(lease: HeldLease): () => void;
}

/**
 * Renews every held lease each `periodMs` (a run held since less than a period may be renewed early: renewing early
 * is harmless, late is not), and renews a run's lease at once when a change says its task is cancelled. The timer
 * and the subscription exist only while some lease is held.
 */
export function createLeaseKeeper(store: TaskStore, periodMs: number): LeaseKeeper {
  const held = new Map<string, Set<HeldLease>>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: (() => void) | undefined;

  const renewAll = (): void => {
    for (const leases of held.values()) for (const lease of leases) lease.renew();
  };
  const start = (): void => {
    timer = setInterval(renewAll, periodMs);
    unsubscribe = store.changes?.subscribe((c) => {
      if (!c.cancelRequested) return;
      const leases = held.get(c.taskId);
      if (leases !== undefined) for (const lease of leases) lease.renew();
    });
  };
  const stop = (): void => {
    clearInterval(timer);
    timer = undefined;
    unsubscribe?.();
    unsubscribe = undefined;
  };

  return {
    hold(lease) {
      if (held.size === 0) start();
      let leases = held.get(lease.taskId);
      if (leases === undefined) held.set(lease.taskId, (leases = new Set()));
      leases.add(lease);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        leases.delete(lease);
        if (leases.size === 0 && held.get(lease.taskId) === leases) held.delete(lease.taskId);
        if (held.size === 0) stop();
      };
    },
  };
}
