// How one call reaches the upstream: the task's durable step is the upstream call. Before sending, the run records a
// "dispatched" marker (a fenced step whose value names this run and task); the upstream's result is the call step's
// value. A replay that finds the marker of an earlier run and no result knows the upstream may have done the call:
// an idempotent tool (idempotentHint, readOnlyHint, or named in the settings) sends it again, at least once; any
// other ends failed, "outcome unknown", at most once, for a person to check and retry. docs/gateway.md has the table.
import { randomUUID } from 'node:crypto';
import type { HandlerContext } from '../protocol/tool-types.js';
import type { CallToolResult, JsonObject, JsonValue } from '../protocol/types.js';
import { StepFailedError } from '../tasks/execution.js';
import { NonRetryableError, type RetryPolicy } from '../tasks/retry.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { ErrorCode } from '../wire/codes.js';
import { globMatcher } from './globs.js';
import {
  UpstreamLostError,
  UpstreamNotSentError,
  UpstreamRefusedError,
  type Upstream,
  type UpstreamTool,
} from './upstream.js';

/** The `_meta` key under which the task's idempotency key goes upstream. */
export const META_UPSTREAM_IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';

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
}

export function deliveryOf(tool: UpstreamTool, settings: DeliverySettings): Delivery {
  const hints = tool.annotations ?? {};
  const idempotent =
    hints.idempotentHint === true ||
    hints.readOnlyHint === true ||
    globMatcher(settings.idempotentTools)(tool.name);
  return {
    idempotent,
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
export function outcomeUnknown(tool: string, why: string): ProtocolError {
  return new ProtocolError(
    ErrorCode.InternalError,
    'outcome unknown: the upstream may have done this; check before retrying',
    { outcome: 'unknown', tool, reason: why },
  );
}

/** Raised inside the call step of a replay that finds the call dispatched by an earlier run. */
class DispatchedBefore extends NonRetryableError {
  override name = 'DispatchedBefore';
}

/**
 * The upstream's JSON-RPC error answer, as the call step fails with it: a definite refusal, never retried. Its code
 * is in its message, so that the step's failure as the store keeps it (name and message) still carries it.
 */
class Refused extends NonRetryableError {
  override name = 'UpstreamRefused';
  constructor(readonly refusal: UpstreamRefusedError) {
    super(`upstream error ${refusal.code}: ${refusal.message}`);
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
function kindOf(e: unknown): 'dispatched' | 'refused' | 'not_sent' | 'lost' | undefined {
  const replayed = e instanceof StepFailedError ? e.name : undefined;
  if (e instanceof DispatchedBefore || replayed === 'DispatchedBefore') return 'dispatched';
  if (e instanceof Refused || replayed === 'UpstreamRefused') return 'refused';
  if (e instanceof UpstreamNotSentError || replayed === 'UpstreamNotSentError') return 'not_sent';
  if (e instanceof UpstreamLostError || replayed === 'UpstreamLostError') return 'lost';
  return undefined;
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
        return outcomeUnknown(tool, 'the gateway stopped after sending the call, before its answer was kept');
      case 'refused':
        return refusalOf(e as Error);
      case 'not_sent':
        return new ProtocolError(ErrorCode.InternalError, `the call was not sent: ${(e as Error).message}`, {
          outcome: 'not_sent',
          tool,
        });
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

export async function callUpstream(
  upstream: Upstream,
  tool: string,
  args: JsonObject,
  ctx: HandlerContext,
  delivery: Delivery,
  _settings: DeliverySettings,
): Promise<CallToolResult> {
  try {
    // At most once: the marker goes in only once a session is open, so that an upstream that cannot be reached fails
    // the call as not sent rather than as an unknown outcome.
    if (!delivery.idempotent) await upstream.ready(ctx.signal);
    // The marker names this run and this task: an operator's retry (a new task that starts from the steps of the one
    // it retries) sends the call again, while a replay of this same task after a crash finds another run's marker.
    const mine = { run: randomUUID(), task: ctx.taskId ?? null };
    const marker = (await ctx.step('dispatched', () => mine)) as { run?: unknown; task?: unknown } | null;
    const sentByAnotherRun = marker?.task === mine.task && marker.run !== mine.run;
    const key = keyOf(ctx);
    const result = await ctx.step(
      'upstream',
      async () => {
        if (sentByAnotherRun && !delivery.idempotent)
          throw new DispatchedBefore(`the call of ${tool} was sent by an earlier run`);
        const answer = await upstream
          .callTool(tool, args, {
            signal: ctx.signal,
            meta: key === undefined ? undefined : { [META_UPSTREAM_IDEMPOTENCY_KEY]: key },
            onProgress: (progress, total, message) => ctx.progress(progress, total, message),
          })
          .catch((err: unknown) => {
            // A JSON-RPC error answer is the upstream's word: the same on every attempt.
            throw err instanceof UpstreamRefusedError ? new Refused(err) : err;
          });
        return answer as unknown as JsonValue;
      },
      { retry: delivery.retry },
    );
    return result as unknown as CallToolResult;
  } catch (err) {
    throw failureOf(err, tool, delivery);
  }
}
