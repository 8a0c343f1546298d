// Multi round-trip requests: answers carried across rounds, pending input, and the InputRequiredResult.
import { InputResponsesV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { ClientCapabilities } from '../wire/envelope.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { invalidParams, missingCapability } from '../wire/protocol-error.js';
import { answerRefused, checkAnswers } from './input-answers.js';
import { checkInputRequests } from './input-requests.js';
import { newNonce } from './one-time.js';
import type { StateSealer } from './request-state.js';
import type { InputRequest, InputRequests, InputResponses, JsonValue } from './types.js';

/** Thrown by `ctx.input()` / `ctx.inputRequired()` to end this round with an InputRequiredResult. */
export class InputPending {
  /** Steers the round (ends it asking for input): never a failed step attempt nor a tool error. */
  readonly controlFlow = true;
  /** Throws a TypeError instead when a request is not one a client can answer (checkInputRequests). */
  constructor(
    readonly requests: InputRequests,
    readonly state: JsonValue | undefined,
  ) {
    checkInputRequests(requests);
  }
}

export interface MrtrRound {
  /** Every answer received so far: earlier rounds (from requestState) plus this round's inputResponses. */
  answers: InputResponses;
  /** The handler's own state from the previous round, if it set one. */
  state: JsonValue | undefined;
  /** The nonce of the one-time requestState this round presents, and when that state expires. */
  nonce?: { value: string; expiresAt: number };
}

interface SealedState {
  a: InputResponses;
  s?: JsonValue;
  /** The requests this state's round asked: the next round's answers are checked against them before anything. */
  r?: InputRequests;
  /** Nonce and expiry of a one-time state (a round of tools/call). */
  n?: string;
  x?: number;
}

export const MRTR_STATE_TTL_MS = 10 * 60_000;

/** Reads inputResponses and requestState of a (retried) request. */
export function readRound(
  params: JsonObject,
  sealer: StateSealer,
  binding: string,
  nowMs: number,
): MrtrRound {
  let answers: InputResponses = {};
  let state: JsonValue | undefined;
  let nonce: MrtrRound['nonce'];
  let sealed: SealedState | undefined;
  if (params.requestState !== undefined) {
    if (typeof params.requestState !== 'string')
      throw invalidParams('Invalid params: requestState must be a string');
    const opened = sealer.unseal(params.requestState, binding, nowMs);
    if (!opened.ok) throw invalidParams(`Invalid params: requestState rejected (${opened.reason})`);
    sealed = opened.value as SealedState;
    answers = { ...sealed.a };
    state = sealed.s;
    if (typeof sealed.n === 'string' && typeof sealed.x === 'number')
      nonce = { value: sealed.n, expiresAt: sealed.x };
  }
  if (params.inputResponses !== undefined) {
    const parsed = InputResponsesV2Schema.safeParse(params.inputResponses);
    if (!parsed.success || !isJsonObject(params.inputResponses)) {
      const key = parsed.success ? '' : String(parsed.error.issues[0]?.path[0] ?? '');
      throw invalidParams(`Invalid params: malformed inputResponses${key ? ` (key "${key}")` : ''}`);
    }
    if (sealed?.r !== undefined) {
      // Checked before the round uses its one-time state, so a refused answer leaves it usable for a corrected one.
      const check = checkAnswers(sealed.r, params.inputResponses);
      if (!check.ok) throw answerRefused(check.key, check);
    }
    for (const [key, value] of Object.entries(params.inputResponses)) answers[key] = value as JsonObject;
  }
  return nonce === undefined ? { answers, state } : { answers, state, nonce };
}

/** Which client capability an input request needs, as a requiredCapabilities object; undefined if declared. */
export function missingCapabilityFor(
  request: InputRequest,
  caps: ClientCapabilities,
): JsonObject | undefined {
  switch (request.method) {
    case 'elicitation/create': {
      const elicitation = caps.elicitation;
      const mode = isJsonObject(request.params) ? request.params.mode : undefined;
      if (mode === 'url') return isJsonObject(elicitation?.url) ? undefined : { elicitation: { url: {} } };
      if (!isJsonObject(elicitation)) return { elicitation: {} };
      const formOnly = elicitation.form === undefined && elicitation.url === undefined;
      return formOnly || isJsonObject(elicitation.form) ? undefined : { elicitation: { form: {} } };
    }
    case 'sampling/createMessage':
      return isJsonObject(caps.sampling) ? undefined : { sampling: {} };
    case 'roots/list':
      return isJsonObject(caps.roots) ? undefined : { roots: {} };
    default:
      return undefined;
  }
}

export function inputRequiredResult(
  pending: InputPending,
  round: MrtrRound,
  caps: ClientCapabilities,
  sealer: StateSealer,
  binding: string,
  nowMs: number,
  oneTime: boolean,
): JsonObject {
  for (const request of Object.values(pending.requests)) {
    const missing = missingCapabilityFor(request, caps);
    if (missing !== undefined) {
      throw missingCapability(`This request needs the client capability for ${request.method}`, missing);
    }
  }
  const expiresAt = nowMs + MRTR_STATE_TTL_MS;
  const sealed: SealedState = { a: round.answers };
  if (pending.state !== undefined) sealed.s = pending.state;
  if (Object.keys(pending.requests).length > 0) sealed.r = pending.requests;
  if (oneTime) {
    sealed.n = newNonce();
    sealed.x = expiresAt;
  }
  const result: JsonObject = {
    resultType: 'input_required',
    requestState: sealer.seal(sealed, binding, expiresAt),
  };
  if (Object.keys(pending.requests).length > 0) result.inputRequests = pending.requests;
  return result;
}
