// tools/call from the client: an idempotency key journaled before the call is sent, lost answers sent again with
// it, MRTR rounds answered by the input handler, and a handle for a task result.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { META_IDEMPOTENCY_KEY, TASKS_EXTENSION } from '../wire/meta-keys.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { InputRequiredError, InvalidResponseError } from './errors.js';
import { newIdempotencyKey } from './idempotency-key.js';
import type { Journal } from './journal.js';
import type { Request, RequestOptions } from './request.js';
import { TaskHandle, type InputHandler, type TaskClient } from './task-handle.js';
import { neverSent } from './retry.js';
import { delay } from './wait.js';

/** Options of one tools/call. */
export interface CallOptions extends RequestOptions {
  onInput?: InputHandler;
  /**
   * The call's idempotency key (default: a new random one for each call that declares the tasks extension). Reuse a
   * key to reach the task an earlier call with it created (same tool and arguments) instead of creating another.
   */
  idempotencyKey?: string;
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
      await delay((deps.settings.callRetryDelayMs ?? 250) * 2 ** attempt, opts.signal);
      opts.signal?.throwIfAborted();
    }
  }
}

/** The handle of a task result, recorded in the journal. */
function taskOf(
  deps: ToolCallDeps,
  name: string,
  key: string | undefined,
  declared: boolean,
  result: JsonObject,
): TaskHandle {
  if (!declared || typeof result.taskId !== 'string')
    throw new InvalidResponseError('unexpected task result');
  deps.settings.journal?.record({
    taskId: result.taskId,
    server: deps.server,
    tool: name,
    createdAt: Date.now(),
    status: String(result.status),
    ...(key === undefined ? {} : { idempotencyKey: key }),
  });
  return new TaskHandle(deps.taskClient, result.taskId, name);
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

export async function callTool(
  deps: ToolCallDeps,
  name: string,
  args: JsonObject,
  opts: CallOptions,
): Promise<CallResult> {
  const { settings } = deps;
  const onInput = opts.onInput ?? settings.onInput;
  const caps = opts.capabilities ?? deps.capabilities;
  const declared = isJsonObject(caps.extensions) && caps.extensions[TASKS_EXTENSION] !== undefined;
  // A call that may create a task carries a key, journaled before it is sent: a lost answer or a crash of this
  // process then leads back to that task instead of a second one.
  const key = opts.idempotencyKey ?? (declared ? newIdempotencyKey() : undefined);
  const meta: JsonObject =
    key === undefined ? { ...opts.meta } : { ...opts.meta, [META_IDEMPOTENCY_KEY]: key };
  const callOpts: RequestOptions = { ...opts, meta };
  if (key !== undefined)
    settings.journal?.beginCall?.({
      idempotencyKey: key,
      server: deps.server,
      tool: name,
      args,
      createdAt: Date.now(),
    });
  const settle = (): void => {
    if (key !== undefined) settings.journal?.endCall?.(key);
  };
  let extra: JsonObject = {};
  let lost = false;
  try {
    for (let round = 0; round < (settings.maxRounds ?? 16); round++) {
      const result = await sendCall(
        deps,
        { name, arguments: args, ...extra },
        callOpts,
        key !== undefined,
      ).catch((err: unknown) => {
        lost = answerLost(err, opts.signal);
        throw err;
      });
      const type = result.resultType ?? 'complete';
      if (type === 'complete') {
        settle();
        return { kind: 'result', result };
      }
      if (type === 'task') {
        const task = taskOf(deps, name, key, declared, result);
        settle();
        return { kind: 'task', task };
      }
      if (type !== 'input_required') throw new InvalidResponseError(`unknown resultType "${String(type)}"`);
      extra = await nextRound(result, onInput, name);
    }
  } catch (err) {
    // Only a lost answer leaves the call pending (for resumeAll); any answer, even an error, settles it.
    if (!lost) settle();
    throw err;
  }
  settle();
  throw new InvalidResponseError(`tools/call ${name}: more than ${settings.maxRounds ?? 16} input rounds`);
}
