// tools/call from the client: an idempotency key journaled before the call is sent, lost answers sent again with
// it, MRTR rounds answered by the input handler, a handle for a task result, and calls the journal kept sent again.
import { checkIdempotencyKey } from '../wire/idempotency-key.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { META_IDEMPOTENCY_KEY, TASKS_EXTENSION } from '../wire/meta-keys.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { InputRequiredError, InvalidResponseError } from './errors.js';
import { newIdempotencyKey } from './idempotency-key.js';
import { MAX_LABEL_LENGTH, type Journal, type PendingCall } from './journal.js';
import type { Request, RequestOptions } from './request.js';
import { TaskHandle, type InputHandler, type TaskClient } from './task-handle.js';
import { neverSent, turnedAway } from './retry.js';
import { delay } from './wait.js';
import { backoffCeilingMs } from '../pacing/backoff.js';

/** Options of one tools/call. */
export interface CallOptions extends RequestOptions {
  onInput?: InputHandler;
  /**
   * The call's idempotency key (default: a new random one for each call that declares the tasks extension): 1 to 255
   * characters, none of them a control character (else the call is refused with a RangeError before it is sent).
   * Reuse a key to reach the task an earlier call with it created (same tool and arguments) instead of creating
   * another.
   */
  idempotencyKey?: string;
  /**
   * The app's own name for this call (at most 256 characters; the server never sees it). The journal keeps it with
   * the call and its task, and the task's handle carries it (`handle.label`), also on the handles and failures
   * `resumeAll()` returns after a restart: how the app tells which of its calls a resumed task belongs to.
   */
  label?: string;
}

export type CallResult = { kind: 'result'; result: JsonObject } | { kind: 'task'; task: TaskHandle };

/** The client's options a call follows (see CreateClientOptions). */
export interface CallSettings {
  onInput?: InputHandler;
  journal?: Journal;
  maxRounds?: number;
  callRetries?: number;
  callRetryDelayMs?: number;
}

export interface ToolCallDeps {
  request: Request;
  /** The client's capabilities (a call may replace them). */
  capabilities: JsonObject;
  /** The server, as the journal names it. */
  server: string;
  taskClient: TaskClient;
  settings: CallSettings;
}

/**
 * True for a failure that may have lost the answer: not a JSON-RPC error, not the caller's own abort, and not a call
 * that was never sent (a refused connection, which the transport has already tried again as its policy says).
 */
const answerLost = (err: unknown, signal: AbortSignal | undefined): boolean =>
  !(err instanceof ProtocolError) && signal?.aborted !== true && !neverSent(err);

/**
 * True when the server did not answer a call sent again: it could not be reached, its answer was lost, or a balancer
 * or a server starting or draining turned it away (502/503). Such a call stays pending; any other answer settles it.
 */
const unanswered = (err: unknown): boolean => !(err instanceof ProtocolError) || turnedAway(err);

/** One call: the tool and arguments, its key and label, and whether it declares the tasks extension. */
interface ToolCall {
  name: string;
  args: JsonObject;
  key: string | undefined;
  label: string | undefined;
  declared: boolean;
}

/**
 * Sends a tools/call, again after a lost answer when it carries an idempotency key (same body, so the same key); a
 * call without one may have run, so it is never sent twice.
 */
async function sendCall(
  deps: ToolCallDeps,
  params: JsonObject,
  opts: RequestOptions,
  keyed: boolean,
): Promise<JsonObject> {
  const retries = keyed ? (deps.settings.callRetries ?? 2) : 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.request('tools/call', params, opts);
    } catch (err) {
      if (attempt >= retries || !answerLost(err, opts.signal)) throw err;
      await delay(backoffCeilingMs(attempt, deps.settings.callRetryDelayMs ?? 250, Infinity), opts.signal);
      opts.signal?.throwIfAborted();
    }
  }
}

/** The handle of a task result, recorded in the journal. */
function taskOf(deps: ToolCallDeps, call: ToolCall, result: JsonObject): TaskHandle {
  if (!call.declared || typeof result.taskId !== 'string')
    throw new InvalidResponseError('unexpected task result');
  const { name, key, label, args } = call;
  deps.settings.journal?.record({
    taskId: result.taskId,
    server: deps.server,
    tool: name,
    createdAt: Date.now(),
    status: String(result.status),
    args,
    ...(key === undefined ? {} : { idempotencyKey: key }),
    ...(label === undefined ? {} : { label }),
  });
  return new TaskHandle(deps.taskClient, result.taskId, name, { label, args });
}

/** What the next round of an input_required result sends: the answers, and the state exactly as received. */
async function nextRound(
  result: JsonObject,
  onInput: InputHandler | undefined,
  name: string,
): Promise<JsonObject> {
  const requests = isJsonObject(result.inputRequests)
    ? (result.inputRequests as Record<string, JsonObject>)
    : {};
  let answers: Record<string, JsonObject> = {};
  if (Object.keys(requests).length > 0) {
    if (onInput === undefined) throw new InputRequiredError(requests);
    answers = await onInput(requests, { tool: name });
  }
  // A retry is a new request (new id) carrying the answers and the state exactly as received.
  const extra: JsonObject = { inputResponses: answers };
  if (typeof result.requestState === 'string') extra.requestState = result.requestState;
  return extra;
}

const declaresTasks = (capabilities: JsonObject): boolean =>
  isJsonObject(capabilities.extensions) && capabilities.extensions[TASKS_EXTENSION] !== undefined;

/** The app's own key of a call, checked as the server checks it (refused before anything is journaled or sent). */
function checkKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  const checked = checkIdempotencyKey(key);
  if (!checked.ok) throw new RangeError(`a call's idempotency key ${checked.reason}`);
  return checked.value;
}

/** The app's label of a call, checked: a string of at most MAX_LABEL_LENGTH characters. */
function checkLabel(label: unknown): string | undefined {
  if (label === undefined) return undefined;
  if (typeof label !== 'string' || label.length > MAX_LABEL_LENGTH)
    throw new RangeError(`a call's label must be a string of at most ${MAX_LABEL_LENGTH} characters`);
  return label;
}

export async function callTool(
  deps: ToolCallDeps,
  name: string,
  args: JsonObject,
  opts: CallOptions,
): Promise<CallResult> {
  const label = checkLabel(opts.label);
  const declared = declaresTasks(opts.capabilities ?? deps.capabilities);
  // A call that may create a task carries a key, journaled before it is sent: a lost answer or a crash of this
  // process then leads back to that task instead of a second one.
  const key = checkKey(opts.idempotencyKey) ?? (declared ? newIdempotencyKey() : undefined);
  if (key !== undefined)
    deps.settings.journal?.beginCall?.({
      idempotencyKey: key,
      server: deps.server,
      tool: name,
      args,
      createdAt: Date.now(),
      ...(label === undefined ? {} : { label }),
    });
  // Only a lost answer leaves the call pending (for resumeAll); any answer, even an error, settles it, and so does a
  // call never sent: its caller has the error.
  return runCall(deps, { name, args, key, label, declared }, opts, (err) => answerLost(err, opts.signal));
}

/** A call the journal kept, sent again: its result or task, or why it failed and whether it is still pending. */
export type ResentCall = CallResult | { kind: 'failed'; error: unknown; pending: boolean };

/**
 * Sends again a call the journal kept as pending, with its key and label (it is journaled already). A refusal by the
 * server settles it; a call the server did not answer (see `unanswered`) stays pending for a later try.
 */
export async function resendCall(deps: ToolCallDeps, call: PendingCall): Promise<ResentCall> {
  const declared = declaresTasks(deps.capabilities);
  let pending = false;
  const keep = (err: unknown): boolean => {
    pending = unanswered(err);
    return pending;
  };
  const { tool: name, idempotencyKey: key, label } = call;
  try {
    return await runCall(deps, { name, args: call.args as JsonObject, key, label, declared }, {}, keep);
  } catch (error) {
    return { kind: 'failed', error, pending };
  }
}

/**
 * Sends a call and its MRTR rounds until it ends in a result or a task. It ends the call's journal record unless
 * sending failed in a way `keepsPending` says leaves it pending.
 */
async function runCall(
  deps: ToolCallDeps,
  call: ToolCall,
  opts: CallOptions,
  keepsPending: (err: unknown) => boolean,
): Promise<CallResult> {
  const { settings } = deps;
  const { name, args, key } = call;
  const onInput = opts.onInput ?? settings.onInput;
  const meta: JsonObject =
    key === undefined ? { ...opts.meta } : { ...opts.meta, [META_IDEMPOTENCY_KEY]: key };
  const callOpts: RequestOptions = { ...opts, meta };
  const settle = (): void => {
    if (key !== undefined) settings.journal?.endCall?.(key);
  };
  let extra: JsonObject = {};
  let pending = false;
  try {
    for (let round = 0; round < (settings.maxRounds ?? 16); round++) {
      const result = await sendCall(
        deps,
        { name, arguments: args, ...extra },
        callOpts,
        key !== undefined,
      ).catch((err: unknown) => {
        pending = keepsPending(err);
        throw err;
      });
      const type = result.resultType ?? 'complete';
      if (type === 'complete') {
        settle();
        return { kind: 'result', result };
      }
      if (type === 'task') {
        const task = taskOf(deps, call, result);
        settle();
        return { kind: 'task', task };
      }
      if (type !== 'input_required') throw new InvalidResponseError(`unknown resultType "${String(type)}"`);
      extra = await nextRound(result, onInput, name);
    }
  } catch (err) {
    if (!pending) settle();
    throw err;
  }
  settle();
  throw new InvalidResponseError(`tools/call ${name}: more than ${settings.maxRounds ?? 16} input rounds`);
}
