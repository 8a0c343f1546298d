// JSON-RPC 2.0 framing: classify one incoming message and build outgoing ones.
import { ErrorCode } from './codes.js';
import { ProtocolError } from './protocol-error.js';

export type RequestId = string | number;
export type JsonObject = Record<string, unknown>;

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

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

/** Parses one POST body. Only a single request or notification is accepted (no batches, no responses). */
export function parseMessage(body: string): ParseOutcome {
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
  return classify(raw);
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

export function resultResponse(id: RequestId, result: JsonObject): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`;
}

export function errorResponse(id: RequestId | null, error: ProtocolError): string {
  const idPart = id === null ? '' : `"id":${JSON.stringify(id)},`;
  return `{"jsonrpc":"2.0",${idPart}"error":${JSON.stringify(error.toJSON())}}`;
}

export function notificationMessage(method: string, params: JsonObject): string {
  return JSON.stringify({ jsonrpc: '2.0', method, params });
}
