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
  /**
   * Whether every change other instances commit is heard from now on: LISTEN is in effect on a connection that has
   * not been dropped. False before the first subscriber, while reconnecting, and with `listen: false`.
   */
  listening(): boolean;
  close(): Promise<void>;
}

/**
 * How PostgreSQL's json_build_object begins the payload of a notification `origin` sent (sql/fragments.ts, notifier):
 * its own come back to every listening instance, one per change it committed, and are dropped without parsing them.
 */
export const ownPayloadPrefix = (origin: string): string => `{"origin" : ${JSON.stringify(origin)},`;

/** Parses a notification payload `{origin, taskId, runnable, cancelRequested}`; undefined for our own or junk. */
export function parseNotification(
  payload: string,
  origin: string,
  own = ownPayloadPrefix(origin),
): TaskChange | undefined {
  if (payload.startsWith(own)) return undefined;
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
  const resyncs = new Set<() => void>();
  let listener: ChangeListener | undefined;
  let closed = false;
  let live = false;
  const own = ownPayloadPrefix(options.origin);

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
      subscribe(fn, onResync) {
        listeners.add(fn);
        if (onResync !== undefined) resyncs.add(onResync);
        // The LISTEN connection opens with the first subscriber and stays until close.
        if (options.listen && !closed && listener === undefined) {
          listener = startChangeListener({
            config: options.config(),
            channel: options.channel,
            probeMs: options.probeMs,
            onPayload: (payload) => {
              const change = parseNotification(payload, options.origin, own);
              if (change !== undefined) emit(change);
            },
            onLost: () => {
              live = false;
            },
            // Whatever was committed before LISTEN took effect went unheard: subscribers read again.
            onListening: () => {
              live = true;
              for (const resync of [...resyncs]) {
                try {
                  resync();
                } catch {
                  // as for changes: a subscriber's bug stays its own
                }
              }
            },
          });
        }
        return () => {
          listeners.delete(fn);
          if (onResync !== undefined) resyncs.delete(onResync);
        };
      },
    },
    emitLocal(changes) {
      for (const change of changes) emit(change);
    },
    listening: () => live && !closed,
    async close() {
      closed = true;
      listeners.clear();
      resyncs.clear();
      await listener?.close();
    },
  };
}
