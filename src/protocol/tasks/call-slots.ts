// Calls that run within their request (a `never` tool, a synchronous call of an `optional` tool) of a tool with
// task.concurrency take the same slots as the tool's tasks: a call waits for one within a budget, holds it while its
// handler runs (its row renewed, so a process that dies frees it soon after), and is refused, server busy, when
// none frees in time.
import { randomUUID } from 'node:crypto';
import { backoffMs } from '../../pacing/backoff.js';
import { concurrencyOf } from '../../tasks/concurrency.js';
import type { SlotHolder, TaskStore } from '../../tasks/store.js';
import { ownerOf, type ConcurrencyLimit } from '../../tasks/task.js';
import { ErrorCode } from '../../wire/codes.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import type { RequestScope } from '../scope.js';
import type { ToolCall } from '../tools.js';
import type { TakeStepSlot } from '../inline-steps.js';

/** How long a call waits for a slot by default (TasksExtensionOptions.slotWaitMs). */
export const DEFAULT_CALL_SLOT_WAIT_MS = 10_000;
/** A call's slot counts this long after it was last renewed: a process that dies frees it within this time. */
export const CALL_SLOT_HOLD_MS = 60_000;
/** The first and longest pause between two looks at a full key. */
const FIRST_PAUSE_MS = 25;
const LONGEST_PAUSE_MS = 1_000;
/** What a refused call is told to wait before it tries again. */
const RETRY_AFTER_MS = 1_000;

export interface CallSlotDeps {
  store: TaskStore;
  now: () => number;
  /** How long a call waits for a slot before it is refused (ms; 0: refused at once when the key is full). */
  waitMs: number;
}

/** The slots of calls within their request on `store`, waiting `waitMs` (TasksExtensionOptions.slotWaitMs). */
export function callSlotDeps(
  store: TaskStore,
  now: () => number,
  waitMs = DEFAULT_CALL_SLOT_WAIT_MS,
): CallSlotDeps {
  if (!Number.isSafeInteger(waitMs) || waitMs < 0)
    throw new TypeError('tasks.slotWaitMs must be a whole number of ms >= 0');
  return { store, now, waitMs };
}

/**
 * The refusal of a call whose key stayed full for the whole wait: JSON-RPC 429 (HTTP 429 with Retry-After). `tool`
 * names the tool whose computed key it was: such a key is not repeated (it may be kept as a digest).
 */
export function serverBusy(
  tool: string,
  limit: ConcurrencyLimit,
  waitMs: number,
  step?: string,
): ProtocolError {
  const key =
    limit.derived === true ? `the concurrency key of tool "${tool}"` : `concurrency key "${limit.key}"`;
  const noun = limit.limit === 1 ? 'the only slot' : `all ${limit.limit} slots`;
  const of = step === undefined ? '' : ` (for step "${step}")`;
  return new ProtocolError(
    ErrorCode.TooManyRequests,
    `Server busy: ${noun} of ${key}${of} stayed taken for ${waitMs} ms; try again later`,
    {
      ...(limit.derived === true ? {} : { concurrencyKey: limit.key }),
      limit: limit.limit,
      retryAfterMs: RETRY_AFTER_MS,
    },
  );
}

/** Resolves after `ms`, or rejects with the signal's reason once it fires. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** Takes a slot for `holder`, looking again with growing pauses until `deadline`; false when none freed. */
async function waitForSlot(deps: CallSlotDeps, holder: SlotHolder, signal: AbortSignal): Promise<boolean> {
  const acquire = deps.store.acquireSlot?.bind(deps.store);
  if (acquire === undefined) return true;
  const deadline = deps.now() + deps.waitMs;
  for (let n = 0; ; n++) {
    if (await acquire({ ...holder, until: deps.now() + CALL_SLOT_HOLD_MS }, deps.now())) return true;
    const left = deadline - deps.now();
    if (left <= 0) return false;
    await pause(Math.min(left, backoffMs(n, FIRST_PAUSE_MS, LONGEST_PAUSE_MS)), signal);
  }
}

/**
 * Takes a slot for `holder` (waiting up to the budget) and keeps it renewed until the returned function frees it
 * (it never throws); undefined when none freed in time. A store without holders counts nothing: a no-op release.
 */
async function takeCallSlot(
  deps: CallSlotDeps,
  holder: SlotHolder,
  signal: AbortSignal,
): Promise<(() => Promise<void>) | undefined> {
  const { store } = deps;
  if (store.acquireSlot === undefined || store.releaseSlot === undefined) return async () => undefined;
  if (!(await waitForSlot(deps, holder, signal))) return undefined;
  // Renewed while it is held: the slot outlives the call only if this process dies, and then not for long.
  const renew = setInterval(() => {
    store
      .acquireSlot?.({ ...holder, until: deps.now() + CALL_SLOT_HOLD_MS }, deps.now())
      .catch(() => undefined);
  }, CALL_SLOT_HOLD_MS / 3);
  renew.unref();
  return async () => {
    clearInterval(renew);
    await store.releaseSlot?.(holder.id, deps.now()).catch(() => undefined);
  };
}

/**
 * Runs `run` (the call's handler) holding a slot of the tool's concurrency key, when the tool has one (a store
 * without acquireSlot runs calls uncounted, as before). Throws serverBusy when the key stays full for the whole wait.
 */
export async function holdingCallSlot<T>(
  deps: CallSlotDeps,
  call: ToolCall,
  scope: RequestScope,
  run: () => Promise<T>,
): Promise<T> {
  const { def } = call.tool;
  const limit = concurrencyOf(def.name, def.task?.concurrency, {
    args: call.args,
    owner: ownerOf(scope.auth),
  });
  if (limit === undefined) return run();
  const holder: SlotHolder = {
    id: `call:${randomUUID()}`,
    slot: { key: limit.key, limit: limit.limit, ...(limit.derived === true ? { derived: true } : {}) },
    sensitive: def.task?.sensitive === true,
  };
  const release = await takeCallSlot(deps, holder, scope.signal);
  if (release === undefined) throw serverBusy(def.name, limit, deps.waitMs);
  try {
    return await run();
  } finally {
    await release();
  }
}

/** The slots of limited steps (StepOptions.concurrency) of calls that run within their request (TakeStepSlot). */
export const callStepSlots =
  (deps: CallSlotDeps): TakeStepSlot =>
  async (step, limit, signal) => {
    const slot = { key: limit.key, limit: limit.limit };
    const release = await takeCallSlot(deps, { id: `step:${randomUUID()}`, slot }, signal);
    if (release === undefined) throw serverBusy('', slot, deps.waitMs, step);
    return release;
  };
