// How one call reaches the upstream: the task's durable steps are the rounds of the upstream call. Before sending a
// round, the run records a "dispatched" marker (a fenced step whose value names this run and task); the upstream's
// answer is the round's step value. A replay that finds the marker of an earlier run and no answer knows the upstream
// may have acted on the round: an idempotent tool (idempotentHint, readOnlyHint, or named in the settings) sends it
// again, at least once; any other ends failed, "outcome unknown", at most once, for a person to check and retry. An
// answer asking for input (MRTR) becomes the gateway task's input, and the caller's answers the next round; an answer
// that is a task of the upstream's is followed to its end (follow.ts). A request a 2025-11-25 upstream sends during
// the call (elicitation, sampling, roots) is asked of the caller with the run live (ctx.waitForInput), for the
// upstream waits on its open session. docs/gateway.md has the rules.
import { randomUUID } from 'node:crypto';
import type { HandlerContext } from '../protocol/tool-types.js';
import type { CallToolResult, JsonObject, JsonValue } from '../protocol/types.js';
import { StepFailedError } from '../tasks/execution.js';
import { NonRetryableError, type RetryPolicy } from '../tasks/retry.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { ErrorCode } from '../wire/codes.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { TASKS_EXTENSION } from '../wire/meta-keys.js';
import { followUpstreamTask } from './follow.js';
import { globMatcher } from './globs.js';
import { createInputKeys, type InputKeys } from './input-keys.js';
import {
  callResultOf,
  isInputRequired,
  isTaskCreated,
  META_UPSTREAM_IDEMPOTENCY_KEY,
  UpstreamInputAbandonedError,
  UpstreamLostError,
  UpstreamNotSentError,
  UpstreamRefusedError,
  UpstreamTaskLostError,
  type Upstream,
  type UpstreamAnswer,
  type UpstreamCallOptions,
  type UpstreamInputRequired,
  type UpstreamTool,
} from './upstream.js';

export { META_UPSTREAM_IDEMPOTENCY_KEY };

export interface DeliverySettings {
  /** Tools (by upstream name, `*` any run of characters) sent again after a crash or a lost call, whatever their hints. */
  idempotentTools?: string[];
  /** Attempts of an idempotent tool's call in all (default 5), with a doubling wait from 1 s up to 30 s between them. */
  retryAttempts?: number;
}

export interface Delivery {
  /** Sent again after a crash or a lost call (at least once); otherwise at most once. */
  idempotent: boolean;
  retry: RetryPolicy;
  /** The tool's `execution.taskSupport` as the upstream lists it (a 2025-11-25 upstream's own tasks). */
  taskSupport?: 'forbidden' | 'optional' | 'required';
}

export function deliveryOf(tool: UpstreamTool, settings: DeliverySettings): Delivery {
  const hints = tool.annotations ?? {};
  const idempotent =
    hints.idempotentHint === true ||
    hints.readOnlyHint === true ||
    globMatcher(settings.idempotentTools)(tool.name);
  return {
    idempotent,
    ...(tool.execution?.taskSupport === undefined ? {} : { taskSupport: tool.execution.taskSupport }),
    retry: idempotent
      ? {
          maxAttempts: settings.retryAttempts ?? 5,
          initialDelayMs: 1_000,
          backoffFactor: 2,
          maxDelayMs: 30_000,
          jitter: 0.2,
        }
      : { maxAttempts: 1 },
  };
}

/** The error of a call that may or may not have been done upstream (at-most-once delivery). */
export function outcomeUnknown(tool: string, why: string, extra: JsonObject = {}): ProtocolError {
  return new ProtocolError(
    ErrorCode.InternalError,
    'outcome unknown: the upstream may have done this; check before retrying',
    { outcome: 'unknown', tool, reason: why, ...extra },
  );
}

/** Raised inside a round's step by a replay that finds the round dispatched by an earlier run. */
class DispatchedBefore extends NonRetryableError {
  override name = 'DispatchedBefore';
  constructor(readonly round: number) {
    super(`round ${round} was sent by an earlier run`);
  }
}

/**
 * The upstream's JSON-RPC error answer, as a round's step fails with it: a definite refusal, never retried. Its code
 * is in its message, so that the step's failure as the store keeps it (name and message) still carries it.
 */
class Refused extends NonRetryableError {
  override name = 'UpstreamRefused';
  constructor(readonly refusal: UpstreamRefusedError) {
    super(`upstream error ${refusal.code}: ${refusal.message}`);
  }
}

/**
 * The upstream failed the call after it stopped waiting for the answer to its request (a 2025-11-25 upstream's own
 * request timeout): a definite end, never retried.
 */
class InputAbandoned extends NonRetryableError {
  override name = 'UpstreamInputAbandoned';
  constructor(method: string, why: string) {
    super(`the upstream stopped waiting for the answer to its ${method}, then failed the call: ${why}`);
  }
}

const causeChain = function* (err: unknown): Generator<unknown> {
  for (let e = err, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    yield e;
};

/**
 * Which failure of the call step `e` is. A replay that meets the step's final failure, kept by an earlier run that
 * stopped before ending the task, gets it back as a StepFailedError with only the original's name and message: it
 * is known by its name.
 */
function kindOf(
  e: unknown,
): 'dispatched' | 'refused' | 'abandoned' | 'not_sent' | 'task_lost' | 'lost' | undefined {
  const replayed = e instanceof StepFailedError ? e.name : undefined;
  if (e instanceof DispatchedBefore || replayed === 'DispatchedBefore') return 'dispatched';
  if (e instanceof InputAbandoned || replayed === 'UpstreamInputAbandoned') return 'abandoned';
  if (e instanceof Refused || replayed === 'UpstreamRefused') return 'refused';
  if (e instanceof UpstreamNotSentError || replayed === 'UpstreamNotSentError') return 'not_sent';
  // Before UpstreamLostError, which it extends (if it does): a task the upstream no longer knows.
  if (e instanceof UpstreamTaskLostError || replayed === 'UpstreamTaskLostError') return 'task_lost';
  if (e instanceof UpstreamLostError || replayed === 'UpstreamLostError') return 'lost';
  return undefined;
}

/** The round a DispatchedBefore names, also when it comes back from the store as its message only. */
function roundOf(e: Error): number {
  if (e instanceof DispatchedBefore) return e.round;
  const m = /^round (\d+) was sent by an earlier run/.exec(e.message);
  return m === null ? 1 : Number(m[1]);
}

/** The upstream's refusal as the caller gets it (its data is not kept with a replayed failure). */
function refusalOf(e: Error): ProtocolError {
  if (e instanceof Refused) return new ProtocolError(e.refusal.code, e.refusal.message, e.refusal.data);
  const m = /^upstream error (-?\d+): ([\s\S]*)$/.exec(e.message);
  return m === null
    ? new ProtocolError(ErrorCode.InternalError, e.message)
    : new ProtocolError(Number(m[1]), m[2] as string);
}

/** The caller's error for a failed upstream call, by what is known of its outcome. */
function failureOf(err: unknown, tool: string, delivery: Delivery): unknown {
  for (const e of causeChain(err)) {
    switch (kindOf(e)) {
      case 'dispatched':
        return outcomeUnknown(
          tool,
          roundOf(e as Error) === 1
            ? 'the gateway stopped after sending the call, before its answer was kept'
            : "the gateway stopped after sending the answers to the upstream's input, before its reply was kept",
        );
      case 'refused':
        return refusalOf(e as Error);
      case 'abandoned':
        return new ProtocolError(ErrorCode.InternalError, (e as Error).message, {
          outcome: 'input_abandoned',
          tool,
        });
      case 'not_sent':
        return new ProtocolError(ErrorCode.InternalError, `the call was not sent: ${(e as Error).message}`, {
          outcome: 'not_sent',
          tool,
        });
      case 'task_lost':
        return outcomeUnknown(
          tool,
          (e as Error).message,
          e instanceof UpstreamTaskLostError ? { upstreamTaskId: e.taskId } : {},
        );
      case 'lost':
        return delivery.idempotent
          ? new ProtocolError(ErrorCode.InternalError, (e as Error).message, { outcome: 'failed', tool })
          : outcomeUnknown(tool, (e as Error).message);
      default:
        continue;
    }
  }
  return err;
}

/** The key that goes upstream with the call: the caller's, or one derived from the task id. */
const keyOf = (ctx: HandlerContext): string | undefined =>
  ctx.taskId === undefined ? undefined : `durable-mcp:${ctx.taskId}`;

/** The most rounds of input one call may take upstream. */
const MAX_ROUNDS = 16;

/**
 * The capabilities a call declares upstream: the input the gateway's caller can answer (so the upstream asks only for
 * that), and the tasks extension when the gateway's call is itself a task. A call answered within its request has
 * nothing to keep an upstream task's id in across the caller's rounds, so it declares no tasks.
 */
function upstreamCapabilities(caller: JsonObject, asTask: boolean): JsonObject {
  const capabilities: JsonObject = {};
  for (const name of ['elicitation', 'sampling', 'roots'])
    if (isJsonObject(caller[name])) capabilities[name] = caller[name];
  if (asTask) capabilities.extensions = { [TASKS_EXTENSION]: {} };
  return capabilities;
}

/**
 * A round's steps. The first exchange with the upstream keeps the names calls were recorded under before there were
 * rounds; an exchange an operator's retry starts anew (see callUpstream) has its number in them.
 */
function stepNames(exchange: number, round: number): { marker: string; answer: string } {
  const names =
    round === 1
      ? { marker: 'dispatched', answer: 'upstream' }
      : { marker: `dispatched-${round}`, answer: `upstream-${round}` };
  return exchange === 1
    ? names
    : { marker: `${names.marker}@${exchange}`, answer: `${names.answer}@${exchange}` };
}

/** The key a request of the upstream's during a call (a 2025-11-25 session) is asked under, before renaming. */
const LIVE_KEYS: Record<string, string> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

/**
 * Answers the upstream's requests during one attempt of a call on a 2025-11-25 session: the task waits for the
 * caller's answer with its run live (ctx.waitForInput), for the upstream waits on its open session. `abandoned` keeps
 * the method of a request the upstream stopped waiting for.
 */
function liveInput(ctx: HandlerContext, abandoned: { method?: string }): UpstreamCallOptions['onInput'] {
  return async (request, signal) => {
    const key = LIVE_KEYS[request.method] ?? 'input';
    // Noted at once: the upstream's answer to the call may come right after it gave up.
    const gaveUp = (): void => {
      if (signal.reason instanceof UpstreamInputAbandonedError) abandoned.method ??= request.method;
    };
    signal.addEventListener('abort', gaveUp, { once: true });
    try {
      const answers = await ctx.waitForInput({ [key]: request }, { signal });
      return answers[key] as JsonObject;
    } finally {
      signal.removeEventListener('abort', gaveUp);
    }
  };
}

/** The text of a tool error result, for an error that quotes it. */
const toolErrorText = (result: JsonObject): string =>
  (Array.isArray(result.content) ? result.content : [])
    .map((c) => (isJsonObject(c) && typeof c.text === 'string' ? c.text : ''))
    .join(' ')
    .trim() || 'a tool error';

/** What one call of the gateway's task works with. */
interface Call {
  upstream: Upstream;
  tool: string;
  args: JsonObject;
  ctx: HandlerContext;
  delivery: Delivery;
  /** What every round sends besides its own answers. */
  options: UpstreamCallOptions;
  keys: InputKeys;
}

/**
 * One round of the call, behind its dispatched marker: the upstream's answer, recorded, and whether another task
 * recorded it (an operator's retry starts from a copy of the steps of the task it retries).
 */
async function sendRound(
  call: Call,
  names: { marker: string; answer: string },
  round: number,
  extra: UpstreamCallOptions,
): Promise<{ answer: UpstreamAnswer; copied: boolean }> {
  const { upstream, ctx, delivery } = call;
  // The marker names this run and this task: an operator's retry sends the call again, while a replay of this same
  // task after a crash finds another run's marker.
  const mine = { run: randomUUID(), task: ctx.taskId ?? null };
  const marker = (await ctx.step(names.marker, async () => {
    // At most once: the marker goes in only once the upstream can be reached, so that one that cannot fails the call
    // as not sent rather than as an unknown outcome.
    if (!delivery.idempotent) await upstream.ready(ctx.signal);
    return mine;
  })) as { run?: unknown; task?: unknown } | null;
  const sentByAnotherRun = marker?.task === mine.task && marker.run !== mine.run;
  const answer = await ctx.step(
    names.answer,
    async () => {
      if (sentByAnotherRun && !delivery.idempotent) throw new DispatchedBefore(round);
      const abandoned: { method?: string } = {};
      const options: UpstreamCallOptions = { ...call.options, ...extra, signal: ctx.signal };
      // Only a task can wait for the caller's answer; a call within its request has the upstream's requests refused.
      if (ctx.taskId !== undefined) options.onInput = liveInput(ctx, abandoned);
      const answer = await upstream.callTool(call.tool, call.args, options).catch((err: unknown) => {
        if (abandoned.method !== undefined && err instanceof UpstreamRefusedError)
          throw new InputAbandoned(abandoned.method, err.message);
        // A JSON-RPC error answer is the upstream's word: the same on every attempt.
        throw err instanceof UpstreamRefusedError ? new Refused(err) : err;
      });
      if (abandoned.method !== undefined && (answer as JsonObject).isError === true)
        throw new InputAbandoned(abandoned.method, toolErrorText(answer as JsonObject));
      return answer as unknown as JsonValue;
    },
    { retry: delivery.retry },
  );
  return { answer: answer as unknown as UpstreamAnswer, copied: marker?.task !== mine.task };
}

/** The next round of an MRTR answer: the caller's answers (under the upstream's keys) and the state as received. */
function nextRound(answer: UpstreamInputRequired, keys: InputKeys, ctx: HandlerContext): UpstreamCallOptions {
  const next: UpstreamCallOptions = {};
  const requests = answer.inputRequests ?? {};
  if (Object.keys(requests).length > 0) next.inputResponses = keys.phase().answer(ctx, requests);
  if (typeof answer.requestState === 'string') next.requestState = answer.requestState;
  return next;
}

/**
 * One exchange with the upstream, round by round: the call's result, or undefined when it ends in an upstream task
 * that another gateway task recorded (the task an operator's retry copied this one from): that one is not followed
 * again, a new exchange sends the call anew.
 */
async function exchange(call: Call, n: number): Promise<CallToolResult | undefined> {
  let extra: UpstreamCallOptions = {};
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    const { answer, copied } = await sendRound(call, stepNames(n, round), round, extra);
    if (isTaskCreated(answer))
      return copied ? undefined : followUpstreamTask(call.upstream, call.tool, answer, call.ctx, call.keys);
    if (!isInputRequired(answer)) return callResultOf(answer);
    extra = nextRound(answer, call.keys, call.ctx);
  }
  throw new ProtocolError(
    ErrorCode.InternalError,
    `the upstream asked for input more than ${MAX_ROUNDS} times`,
    {
      tool: call.tool,
    },
  );
}

/** The most exchanges one task may hold: one more for each operator's retry in the chain that led to it. */
const MAX_EXCHANGES = 100;

export async function callUpstream(
  upstream: Upstream,
  tool: string,
  args: JsonObject,
  ctx: HandlerContext,
  delivery: Delivery,
  _settings: DeliverySettings,
): Promise<CallToolResult> {
  const key = keyOf(ctx);
  const options: UpstreamCallOptions = {
    capabilities: upstreamCapabilities(
      ctx.envelope.clientCapabilities as JsonObject,
      ctx.taskId !== undefined,
    ),
    meta: key === undefined ? undefined : { [META_UPSTREAM_IDEMPOTENCY_KEY]: key },
    onProgress: (progress, total, message) => ctx.progress(progress, total, message),
    owner: { tenant: ctx.auth.tenant, principal: ctx.auth.principal },
    taskSupport: delivery.taskSupport,
  };
  const call: Call = { upstream, tool, args, ctx, delivery, options, keys: createInputKeys() };
  try {
    for (let n = 1; n <= MAX_EXCHANGES; n++) {
      const result = await exchange(call, n);
      if (result !== undefined) return result;
    }
    throw new ProtocolError(ErrorCode.InternalError, `more than ${MAX_EXCHANGES} retries of one call`, {
      tool,
    });
  } catch (err) {
    throw failureOf(err, tool, delivery);
  }
}
