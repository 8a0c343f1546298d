// The testing kit's watch on the code of its runs (durable-mcp/testing): the Node resources (timers, sockets, I/O
// requests, immediates, child processes …) that a run's handler and step bodies opened and that are still open. A run
// in flight that holds none waits on promises alone: if the kit's manual clock has a timer pending, nothing but that
// clock will move it, and settle can say so instead of hanging.
import { AsyncLocalStorage, createHook } from 'node:async_hooks';

/** Callbacks that run before the event loop's next turn: they never keep a run waiting. */
const TRANSIENT = new Set(['PROMISE', 'TickObject', 'Microtask']);

const inRun = new AsyncLocalStorage<true>();
/** The async ids of resources opened by code of a run (of any kit: a pooled socket outlives the run that opened it). */
const held = new Set<number>();
let wakers: (() => void)[] = [];
let watchers = 0;

const wake = (): void => {
  const now = wakers;
  wakers = [];
  for (const resolve of now) resolve();
};

// Destroy hooks cost every promise a little: the hook is on only while a kit is open.
const hook = createHook({
  init(id, type) {
    if (!TRANSIENT.has(type) && inRun.getStore() === true) held.add(id);
  },
  destroy(id) {
    if (held.delete(id) && held.size === 0) wake();
  },
});

export interface RunWatch {
  /** Calls `fn`, counting what it (and everything it starts) opens as a run's. */
  within<T>(fn: () => T): T;
  /** Whether code of a run holds an open resource (one that can call it back without the manual clock). */
  busy(): boolean;
  /** Resolves at the next change worth a look: runs let go of their last resource, or `poke` was called. */
  changed(): Promise<void>;
  /** Something a run may wait on changed (a timer was set on the manual clock). */
  poke(): void;
  /** Stops watching (for this kit). */
  close(): void;
}

export function createRunWatch(): RunWatch {
  if (watchers++ === 0) hook.enable();
  let open = true;
  return {
    within: (fn) => inRun.run(true, fn),
    busy: () => held.size > 0,
    changed: () => new Promise<void>((resolve) => wakers.push(resolve)),
    poke: wake,
    close() {
      if (!open) return;
      open = false;
      if (--watchers > 0) return;
      hook.disable();
      // Unwatched, their ends would go unseen: forget them rather than count them open for ever.
      held.clear();
      wake();
    },
  };
}
