// A client's JSON-RPC request: a fresh id, the full envelope in `_meta` (version, capabilities, client info), and one
// retry with a version both sides speak when the server refuses this one.
import { ErrorCode } from '../wire/codes.js';
import { isJsonObject, type JsonObject, type RequestId } from '../wire/jsonrpc.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../wire/meta-keys.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { InvalidResponseError } from './errors.js';
import type { ClientTransport } from './transport.js';

export interface RequestOptions {
  signal?: AbortSignal;
  onNotification?: (message: JsonObject) => void;
  /** Capabilities for this request only (replacing the client's). */
  capabilities?: JsonObject;
  /** Extra `_meta` keys (e.g. progressToken). */
  meta?: JsonObject;
}

export type Request = (method: string, params?: JsonObject, options?: RequestOptions) => Promise<JsonObject>;

/** What every request of a client carries. */
export interface Envelope {
  transport: ClientTransport;
  capabilities: JsonObject;
  clientInfo: { name: string; version: string };
  protocolVersion: string;
}

/** A version the server offered (in a ErrorCode.UnsupportedProtocolVersion error's data) that this client speaks too. */
function commonVersion(err: ProtocolError): string | undefined {
  const offered = isJsonObject(err.data) && Array.isArray(err.data.supported) ? err.data.supported : [];
  return SUPPORTED_PROTOCOL_VERSIONS.find((v) => offered.includes(v));
}

export function createRequester(envelope: Envelope): Request {
  const { transport, capabilities, clientInfo } = envelope;
  let version = envelope.protocolVersion;
  let nextId = 1;
  const newId = (): RequestId => nextId++;
  return async function request(
    method: string,
    params: JsonObject = {},
    opts: RequestOptions = {},
  ): Promise<JsonObject> {
    for (let attempt = 0; ; attempt++) {
      const meta: JsonObject = {
        ...opts.meta,
        [META_PROTOCOL_VERSION]: version,
        [META_CLIENT_CAPABILITIES]: opts.capabilities ?? capabilities,
      };
      meta[META_CLIENT_INFO] = clientInfo;
      const reply = await transport.send(
        { id: newId(), method, params: { ...params, _meta: meta } },
        { signal: opts.signal, onNotification: opts.onNotification },
      );
      const { message } = reply;
      if (isJsonObject(message.error)) {
        const e = message.error;
        const err = new ProtocolError(Number(e.code), String(e.message), e.data, reply.status);
        // Version negotiation: retry once with a version both sides speak.
        if (err.code === ErrorCode.UnsupportedProtocolVersion && attempt === 0) {
          const common = commonVersion(err);
          if (common !== undefined) {
            version = common;
            continue;
          }
        }
        throw err;
      }
      if (!isJsonObject(message.result))
        throw new InvalidResponseError(`response to ${method} has no result`);
      return message.result;
    }
  };
}
