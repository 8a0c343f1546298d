// A change feed a test drives by hand: it emits changes and resyncs when told.
import type { ChangeFeed, TaskChange } from '../../src/tasks/store.js';

export interface DrivenChangeFeed {
  changes: ChangeFeed;
  /** Tells every subscriber of this change. */
  emit(change: TaskChange): void;
  /** Tells every subscriber that the feed began hearing other processes again. */
  resync(): void;
  /** How many listeners and resync callbacks are subscribed. */
  size(): number;
}

export function drivenChangeFeed(): DrivenChangeFeed {
  const listeners = new Set<(change: TaskChange) => void>();
  const resyncs = new Set<() => void>();
  return {
    changes: {
      subscribe(fn, onResync) {
        listeners.add(fn);
        if (onResync !== undefined) resyncs.add(onResync);
        return () => {
          listeners.delete(fn);
          if (onResync !== undefined) resyncs.delete(onResync);
        };
      },
    },
    emit(change) {
      for (const fn of [...listeners]) fn(change);
    },
    resync() {
      for (const fn of [...resyncs]) fn();
    },
    size: () => listeners.size + resyncs.size,
  };
}
