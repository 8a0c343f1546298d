// The store's change feed: local changes emitted after commit, other processes' changes heard through LISTEN.
import type pg from 'pg';
import type { ChangeFeed, TaskChange } from '../../tasks/store.js';
import { startChangeListener, type ChangeListener } from './notifications.js';

export interface ChangeFeedOptions {
  /** This store instance's id, carried in its notifications so it can ignore its own. */
  origin: string;
  channel: string;
  listen: boolean;
  probeMs: number;
  config: () => pg.ClientConfig;
}

export interface StoreChangeFeed {
  readonly changes: ChangeFeed;
  /** Emits changes this instance has just committed (its own notifications are ignored when they come back). */
  emitLocal(changes: readonly TaskChange[]): void;
  close(): Promise<void>;
}

/** Parses a notification payload `{origin, taskId, runnable, cancelRequested}`; undefined for our own or junk. */
export function parseNotification(payload: string, origin: string): TaskChange | undefined {
  let msg: unknown;
  try {
    msg = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (msg === null || typeof msg !== 'object') return undefined;
  const m = msg as Record<string, unknown>;
  if (m.origin === origin || typeof m.taskId !== 'string') return undefined;
  return { taskId: m.taskId, runnable: m.runnable === true, cancelRequested: m.cancelRequested === true };
}

export function createChangeFeed(options: ChangeFeedOptions): StoreChangeFeed {
  const listeners = new Set<(change: TaskChange) => void>();
  let listener: ChangeListener | undefined;
  let closed = false;

  const emit = (change: TaskChange): void => {
    for (const fn of [...listeners]) {
      try {
        fn(change);
      } catch {
        // A subscriber's bug must not turn a committed write into a failed call.
      }
    }
  };

  return {
    changes: {
      subscribe(fn) {
        listeners.add(fn);
        // The LISTEN connection opens with the first subscriber and stays until close.
        if (options.listen && !closed && listener === undefined) {
          listener = startChangeListener({
            config: options.config(),
            channel: options.channel,
            probeMs: options.probeMs,
            onPayload: (payload) => {
              const change = parseNotification(payload, options.origin);
              if (change !== undefined) emit(change);
            },
          });
        }
        return () => {
          listeners.delete(fn);
        };
      },
    },
    emitLocal(changes) {
      for (const change of changes) emit(change);
    },
    async close() {
      closed = true;
      listeners.clear();
      await listener?.close();
    },
  };
}
