// Runs one synchronous MRTR round of a handler and turns InputPending into an InputRequiredResult.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { createHandlerContext } from './handler-context.js';
import type { TakeStepSlot } from './inline-steps.js';
import type { HandlerContext, ServerControl } from './tool-types.js';
import type { StepDefaults, ToolInputMethod } from './define.js';
import type { ToolErrorReport } from '../tasks/observer.js';
import { InputPending, inputRequiredResult, readRound, type MrtrRound } from './mrtr.js';
import { isOneTimeMethod, nonceKey, type ConsumeOnce } from './one-time.js';
import { requestBinding, type StateSealer } from './request-state.js';
import { invalidParams } from '../wire/protocol-error.js';
import type { RequestScope } from './scope.js';
import { ownerKey } from '../tasks/task.js';

export interface RoundDeps {
  sealer: StateSealer;
  /** Records the nonce of a one-time requestState as used (shared by the replicas of a store). */
  consumeOnce: ConsumeOnce;
  now: () => number;
  control: ServerControl;
  /** Server-wide defaults of `ctx.step`. */
  steps?: StepDefaults;
  /** The largest value a step may return (TaskLimits.maxStepBytes; default 4 MiB). */
  maxStepBytes?: number;
  /** Told of every error a tool threw that became an isError result of a call without a task. */
  onToolError?: (report: ToolErrorReport) => void;
  /** The slots of steps with a concurrency limit (StepOptions.concurrency); none: they run uncounted. */
  takeStepSlot?: TakeStepSlot;
}

export type RoundOutcome<T> = { kind: 'done'; value: T } | { kind: 'input_required'; result: JsonObject };

export const principalKey = (scope: RequestScope): string => ownerKey(scope.auth);

/**
 * Uses up the one-time requestState a round of tools/call presents, before the round acts on it: a state seen
 * before (on any replica) is refused like a tampered or expired one.
 */
async function consumeState(deps: RoundDeps, round: MrtrRound): Promise<void> {
  const nonce = round.nonce;
  if (nonce === undefined) throw invalidParams('Invalid params: requestState rejected (not one-time)');
  if (!(await deps.consumeOnce(nonceKey(nonce.value), nonce.expiresAt)))
    throw invalidParams('Invalid params: requestState rejected (already used)');
}

export async function runRound<T>(
  deps: RoundDeps,
  params: JsonObject,
  scope: RequestScope,
  target: string,
  args: unknown,
  run: (ctx: HandlerContext, round: MrtrRound) => T | Promise<T>,
  steps: StepDefaults | undefined = deps.steps,
  asks?: readonly ToolInputMethod[],
): Promise<RoundOutcome<T>> {
  // Hashing the arguments is only needed when a requestState comes in or goes out.
  let binding: string | undefined;
  const bind = (): string => (binding ??= requestBinding(principalKey(scope), scope.method, target, args));
  const round: MrtrRound =
    params.requestState === undefined && params.inputResponses === undefined
      ? { answers: {}, state: undefined }
      : readRound(params, deps.sealer, bind(), deps.now());
  const oneTime = isOneTimeMethod(scope.method);
  if (oneTime && params.requestState !== undefined) await consumeState(deps, round);
  try {
    const context = createHandlerContext(
      scope,
      round,
      deps.control,
      steps,
      asks,
      deps.maxStepBytes,
      deps.takeStepSlot,
    );
    const value = await run(context, round);
    return { kind: 'done', value };
  } catch (err) {
    if (!(err instanceof InputPending)) throw err;
    const result = inputRequiredResult(
      err,
      round,
      scope.envelope.clientCapabilities,
      deps.sealer,
      bind(),
      deps.now(),
      oneTime,
    );
    return { kind: 'input_required', result };
  }
}

export const asObject = (value: unknown): JsonObject | undefined => (isJsonObject(value) ? value : undefined);
