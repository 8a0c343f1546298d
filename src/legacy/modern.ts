// Runs a legacy request through the shared 2026-07-28 core: same registry, handlers, task store and ownership.
import type { JsonObject } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  TASKS_EXTENSION,
} from '../wire/meta-keys.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import type { LegacyCall } from './call.js';
import { answerRefused, checkAnswer } from '../protocol/input-answers.js';
import { toLegacyError } from './capabilities.js';

/** The modern envelope for a legacy request: the session's capabilities (never the legacy `tasks` one). */
function envelope(call: LegacyCall, params: JsonObject, withTasks: boolean): JsonObject {
  const { session } = call;
  const caps: JsonObject = {};
  for (const key of ['sampling', 'elicitation', 'roots', 'experimental'] as const) {
    const value = session.clientCapabilities[key];
    if (isJsonObject(value)) caps[key] = value;
  }
  if (withTasks) caps.extensions = { [TASKS_EXTENSION]: {} };
  const meta: JsonObject = isJsonObject(params._meta) ? { ...params._meta } : {};
  meta[META_PROTOCOL_VERSION] = LATEST_PROTOCOL_VERSION;
  meta[META_CLIENT_CAPABILITIES] = caps;
  if (session.clientInfo !== undefined) meta[META_CLIENT_INFO] = session.clientInfo;
  if (session.logLevel !== undefined) meta[META_LOG_LEVEL] = session.logLevel;
  return { ...params, _meta: meta };
}

/** Dispatches one modern request; a JSON-RPC error is thrown as the legacy ProtocolError it maps to. */
export async function callModern(
  call: LegacyCall,
  method: string,
  params: JsonObject,
  withTasks = false,
): Promise<JsonObject> {
  const outcome = await call.server.dispatch({
    request: { kind: 'request', id: call.id, method, params: envelope(call, params, withTasks) },
    auth: call.auth,
    signal: call.signal,
    // Routing headers describe the request as sent: they are checked only when it runs as the same method.
    header: method === call.method ? call.routing : undefined,
    emit: call.emit,
  });
  if (!outcome.ok) throw toLegacyError(outcome.error);
  return outcome.result;
}

/** How often one question is asked again after answers that do not answer it. */
const MAX_ASKS = 5;

/**
 * Asks one question as a server→client request, and again while the client's answer does not answer it (each
 * answer is checked against the question before the call goes on); after the last try, the refusal ends the call.
 */
async function askUntilAnswered(
  call: LegacyCall,
  key: string,
  request: { method: string; params?: unknown },
): Promise<JsonObject> {
  const params = isJsonObject(request.params) ? request.params : {};
  for (let asked = 1; ; asked++) {
    const answer = await call.ask(request.method, params);
    const check = checkAnswer(request, answer);
    if (check.ok) return answer;
    if (asked >= MAX_ASKS) throw answerRefused(key, check);
  }
}

/**
 * A modern call whose MRTR rounds are answered by real server→client requests, as 2025-11-25 clients expect:
 * each `inputRequests` entry is asked on the response stream, then the call re-runs with the answers.
 */
export async function callWithInput(
  call: LegacyCall,
  method: string,
  params: JsonObject,
  withTasks = false,
  maxRounds = 16,
): Promise<JsonObject> {
  let current = params;
  for (let round = 0; ; round++) {
    const result = await callModern(call, method, current, withTasks);
    if (result.resultType !== 'input_required' || round >= maxRounds) return result;
    const requests = isJsonObject(result.inputRequests) ? result.inputRequests : {};
    const answers: JsonObject = {};
    await Promise.all(
      Object.entries(requests).map(async ([key, request]) => {
        if (!isJsonObject(request) || typeof request.method !== 'string') return;
        answers[key] = await askUntilAnswered(call, key, request as { method: string; params?: unknown });
      }),
    );
    const previous = isJsonObject(current.inputResponses) ? current.inputResponses : {};
    current = { ...params, inputResponses: { ...previous, ...answers } };
    if (result.requestState !== undefined) current.requestState = result.requestState;
  }
}
