// JSON-RPC 2.0 framing: classify one incoming message and build outgoing ones.
import { ErrorCode } from './codes.js';
import { ProtocolError } from './protocol-error.js';

export type RequestId = string | number;
import { isJsonObject, type JsonObject } from '../json.js';

export { isJsonObject, type JsonObject };

export interface IncomingRequest {
  kind: 'request';
  id: RequestId;
  method: string;
  params: JsonObject | undefined;
}

export interface IncomingNotification {
  kind: 'notification';
  method: string;
  params: JsonObject | undefined;
}

export type IncomingMessage = IncomingRequest | IncomingNotification;

export type ParseOutcome =
  { ok: true; value: IncomingMessage } | { ok: false; error: ProtocolError; id: RequestId | null };

/** The id of a parsed request, as far as it could be read (null for notifications and unreadable ids). */
export const requestIdOf = (parsed: ParseOutcome): RequestId | null =>
  parsed.ok ? (parsed.value.kind === 'request' ? parsed.value.id : null) : parsed.id;

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

/** Deeper JSON than this is refused before parsing: every later recursive walk stays bounded. */
export const MAX_DEPTH = 64;

/** Whether the text holds at most `max` opening brackets in all (strings included): then none nests deeper. */
function openingsAtMost(text: string, max: number): boolean {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > max) return false;
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > max) return false;
  return true;
}

/** Scans the text once (strings skipped) and tells whether brackets nest deeper than `max`. */
export function nestingExceeds(text: string, max: number): boolean {
  if (text.length <= max || openingsAtMost(text, max)) return false; // too few brackets to nest deeper
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Parses one POST body. Only a single request or notification is accepted (no batches, no responses). */
export function parseMessage(body: string, maxDepth = MAX_DEPTH): ParseOutcome {
  if (nestingExceeds(body, maxDepth)) {
    return {
      ok: false,
      id: null,
      error: new ProtocolError(
        ErrorCode.InvalidRequest,
        `Invalid request: JSON nested deeper than ${maxDepth} levels`,
      ),
    };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(body);
  } catch {
    return {
      ok: false,
      id: null,
      error: new ProtocolError(ErrorCode.ParseError, 'Parse error: invalid JSON'),
    };
  }
  const outcome = classify(raw);
  // The escape is rare in real bodies; the walk runs only when it is there.
  if (outcome.ok && body.includes('\\u0000') && holdsNul(outcome.value.params)) {
    const id = outcome.value.kind === 'request' ? outcome.value.id : null;
    return {
      ok: false,
      id,
      error: new ProtocolError(
        ErrorCode.InvalidParams,
        'Invalid params: strings may not contain U+0000 (NUL)',
      ),
    };
  }
  return outcome;
}

/** Whether a NUL character is in any string or key of the value (no store keeps it the same way). */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\0');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (isJsonObject(value)) return Object.entries(value).some(([k, v]) => k.includes('\0') || holdsNul(v));
  return false;
}

export function classify(raw: unknown): ParseOutcome {
  if (!isJsonObject(raw)) {
    const what = Array.isArray(raw) ? 'batches are not supported' : 'expected a JSON-RPC object';
    return invalid(null, `Invalid request: ${what}`);
  }
  const id = isRequestId(raw.id) ? raw.id : null;
  if (raw.jsonrpc !== '2.0') return invalid(id, 'Invalid request: jsonrpc must be "2.0"');
  if ('result' in raw || 'error' in raw) return invalid(id, 'Invalid request: clients never send responses');
  if (typeof raw.method !== 'string' || raw.method.length === 0) {
    return invalid(id, 'Invalid request: method must be a non-empty string');
  }
  if ('params' in raw && raw.params !== undefined && !isJsonObject(raw.params)) {
    return invalid(id, 'Invalid request: params must be an object');
  }
  const params = raw.params as JsonObject | undefined;
  if (!('id' in raw)) return { ok: true, value: { kind: 'notification', method: raw.method, params } };
  if (id === null) return invalid(null, 'Invalid request: id must be a string or an integer');
  return { ok: true, value: { kind: 'request', id, method: raw.method, params } };
}

function invalid(id: RequestId | null, message: string): ParseOutcome {
  return { ok: false, id, error: new ProtocolError(ErrorCode.InvalidRequest, message) };
}

const SERIALIZED = Symbol('serialized');
type Memo = { [SERIALIZED]?: string | null };

/** Marks a result object as immutable from now on, so its JSON is computed once and reused. */
export function memoizeSerialization<T extends JsonObject>(result: T): T {
  (result as Memo)[SERIALIZED] = null;
  return result;
}

export function resultResponse(id: RequestId, result: JsonObject): string {
  const memo = (result as Memo)[SERIALIZED];
  let body: string;
  if (typeof memo === 'string') body = memo;
  else {
    body = JSON.stringify(result);
    if (memo === null) (result as Memo)[SERIALIZED] = body;
  }
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${body}}`;
}

/** A result that cannot be written as JSON (a BigInt, a cycle, a throwing getter): -32603 to its caller alone. */
export const UNSERIALIZABLE_RESULT = 'Internal error: the result could not be serialized as JSON';

/**
 * The response to a request: its result, or, when the result cannot be serialized, a -32603 error (`failed`), so
 * that one bad result never escapes the request that produced it.
 */
export function responseFor(id: RequestId, result: JsonObject): { text: string; failed: boolean } {
  try {
    return { text: resultResponse(id, result), failed: false };
  } catch {
    return {
      text: errorResponse(id, new ProtocolError(ErrorCode.InternalError, UNSERIALIZABLE_RESULT)),
      failed: true,
    };
  }
}

/**
 * An error response. An id that could not be read is left out (2026-07-28: `id` is optional and never null), or,
 * with `nullId`, sent as `"id":null` as JSON-RPC 2.0 and 2025-11-25 clients expect.
 */
export function errorResponse(id: RequestId | null, error: ProtocolError, nullId = false): string {
  const idPart = id === null ? (nullId ? '"id":null,' : '') : `"id":${JSON.stringify(id)},`;
  return `{"jsonrpc":"2.0",${idPart}"error":${JSON.stringify(error.toJSON())}}`;
}

export function notificationMessage(method: string, params: JsonObject): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params });
}
