// A run's input asked while it stays live (ExecutionContext.waitForInput): the task waits `input_required` under the
// run's lease (LiveInputPort), and the run learns of the answers from the change feed, or by looking every
// LIVE_INPUT_POLL_MS when a change goes unheard; whichever process took the answers, the run reads them from the store.
import type { Clock } from '../tasks/clock.js';
import { LeaseLostError, type ExecutionContext } from '../tasks/execution.js';
import type { WaitEnd, WaitInfo } from '../tasks/observer.js';
import type { LiveInputPort, TaskStore } from '../tasks/store.js';
import type { ClaimedTask, JsonObject } from '../tasks/task.js';
import type { RunState } from './steps.js';

/** How often a run waiting for live input looks for the answers besides the change feed's word. */
export const LIVE_INPUT_POLL_MS = 1_000;

/** What the task says of requests withdrawn unanswered (the wait ended without them). */
export const LIVE_INPUT_WITHDRAWN_MESSAGE = 'The input is no longer needed; the task is in progress.';

/** `key`, or `key#2` (the next number free) when the task used it before. */
function freeName(key: string, taken: Set<string>): string {
  let name = key;
  for (let n = 2; taken.has(name); n++) name = `${key}#${n}`;
  return name;
}

/** Resolves on the next change of task `id` (heard or not), after `ms`, or once `signal` fires. */
function nextLook(store: TaskStore, id: string, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      unsubscribe?.();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const unsubscribe = store.changes?.subscribe((c) => {
      if (c.taskId === id) done();
    });
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The answers under the names asked, once all are there; throws when the run no longer holds the task. */
async function waitAnswered(
  port: LiveInputPort,
  deps: { store: TaskStore },
  task: ClaimedTask,
  names: string[],
  signal: AbortSignal,
): Promise<Record<string, JsonObject>> {
  for (;;) {
    // Subscribed before the read: an answer committed in between wakes the next look at once.
    const look = nextLook(deps.store, task.id, LIVE_INPUT_POLL_MS, signal);
    const answers = await port.answers(task.id, task.token, names);
    if (answers === undefined) throw new LeaseLostError(task.id);
    if (names.every((n) => Object.hasOwn(answers, n))) return answers;
    await look;
    if (signal.aborted)
      throw signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason));
  }
}

export function createLiveInput(
  deps: { store: TaskStore; clock: Clock },
  task: ClaimedTask,
  run: RunState,
): ExecutionContext['waitForInput'] {
  const port = deps.store.liveInput;
  if (port === undefined) return undefined;
  // Keys are the task's for its life: those asked or answered before, in any run, are not asked again.
  const taken = new Set([...task.askedKeys, ...Object.keys(task.answers)]);
  return async (requests, statusMessage, signal) => {
    const stop = AbortSignal.any(signal === undefined ? [run.signal] : [run.signal, signal]);
    if (stop.aborted) throw stop.reason instanceof Error ? stop.reason : new Error(String(stop.reason));
    const asked: Record<string, JsonObject> = {};
    const nameOf = new Map<string, string>();
    for (const [key, request] of Object.entries(requests)) {
      const name = freeName(key, taken);
      taken.add(name);
      nameOf.set(key, name);
      asked[name] = request;
    }
    const write = async <T>(op: () => Promise<T>): Promise<T> => {
      try {
        return await op();
      } catch (err) {
        throw run.onWriteError(err);
      }
    };
    if (!(await write(() => port.ask(task.id, task.token, asked, statusMessage, deps.clock.now())))) {
      run.onLeaseLost();
      throw new LeaseLostError(task.id);
    }
    const hooks = run.hooks;
    const waiting: WaitInfo | undefined =
      hooks?.waitStarted === undefined && hooks?.waitEnded === undefined ? undefined : { kind: 'input' };
    if (waiting !== undefined) hooks?.waitStarted?.(waiting);
    let ended: WaitEnd = 'stopped';
    try {
      const answers = await write(() => waitAnswered(port, deps, task, [...nameOf.values()], stop)).catch(
        (err: unknown) => {
          if (err instanceof LeaseLostError) run.onLeaseLost();
          throw err;
        },
      );
      ended = 'over';
      const out: Record<string, JsonObject> = {};
      for (const [key, name] of nameOf) out[key] = answers[name] as JsonObject;
      return out;
    } finally {
      if (waiting !== undefined) hooks?.waitEnded?.(waiting, ended);
      // Working again, whatever ended the wait (a run that lost its lease writes nothing).
      if (!run.leaseLost())
        await write(() =>
          port.end(task.id, task.token, LIVE_INPUT_WITHDRAWN_MESSAGE, deps.clock.now()),
        ).catch(() => undefined);
    }
  };
}
