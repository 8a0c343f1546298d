// Validation of the per-request `_meta` envelope every 2026-07-28 request carries.
import { ErrorCode } from './codes.js';
import { isJsonObject, type JsonObject } from './jsonrpc.js';
import {
  LOG_LEVELS,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  type LogLevel,
} from './meta-keys.js';
import { ProtocolError } from './protocol-error.js';

export interface ClientCapabilities {
  experimental?: JsonObject;
  roots?: JsonObject;
  sampling?: JsonObject;
  elicitation?: { form?: JsonObject; url?: JsonObject };
  extensions?: Record<string, JsonObject>;
  [key: string]: unknown;
}

export interface Implementation {
  name: string;
  version: string;
  [key: string]: unknown;
}

export interface RequestEnvelope {
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: Implementation | undefined;
  logLevel: LogLevel | undefined;
  progressToken: string | number | undefined;
}

export type EnvelopeOutcome = { ok: true; value: RequestEnvelope } | { ok: false; error: ProtocolError };

const CAPABILITY_OBJECT_KEYS = ['experimental', 'roots', 'sampling', 'elicitation', 'extensions'] as const;

/** Reads and shape-checks `params._meta`; the version's support is checked separately (after header checks). */
export function readEnvelope(params: JsonObject | undefined): EnvelopeOutcome {
  if (params === undefined) return fail('Invalid params: params with _meta is required');
  const meta = params._meta;
  if (!isJsonObject(meta)) return fail('Invalid params: params._meta is required');
  const version = meta[META_PROTOCOL_VERSION];
  if (typeof version !== 'string' || version.length === 0) {
    return fail(`Invalid params: _meta["${META_PROTOCOL_VERSION}"] is required`);
  }
  const caps = meta[META_CLIENT_CAPABILITIES];
  if (!isJsonObject(caps)) return fail(`Invalid params: _meta["${META_CLIENT_CAPABILITIES}"] is required`);
  for (const key of CAPABILITY_OBJECT_KEYS) {
    if (caps[key] !== undefined && !isJsonObject(caps[key])) {
      return fail(`Invalid params: clientCapabilities.${key} must be an object`);
    }
  }
  const info = meta[META_CLIENT_INFO];
  if (
    info !== undefined &&
    !(isJsonObject(info) && typeof info.name === 'string' && typeof info.version === 'string')
  ) {
    return fail(`Invalid params: _meta["${META_CLIENT_INFO}"] must have string name and version`);
  }
  const logLevel = meta[META_LOG_LEVEL];
  if (logLevel !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(logLevel)) {
    return fail(`Invalid params: unknown log level (expected one of ${LOG_LEVELS.join(', ')})`);
  }
  const progressToken = meta.progressToken;
  if (
    progressToken !== undefined &&
    typeof progressToken !== 'string' &&
    !Number.isSafeInteger(progressToken)
  ) {
    return fail('Invalid params: progressToken must be a string or an integer');
  }
  return {
    ok: true,
    value: {
      protocolVersion: version,
      clientCapabilities: caps as ClientCapabilities,
      clientInfo: info as Implementation | undefined,
      logLevel: logLevel as LogLevel | undefined,
      progressToken: progressToken as string | number | undefined,
    },
  };
}

function fail(message: string): EnvelopeOutcome {
  return { ok: false, error: new ProtocolError(ErrorCode.InvalidParams, message) };
}

export function hasExtension(caps: ClientCapabilities, id: string): boolean {
  const ext = caps.extensions;
  return isJsonObject(ext) && isJsonObject(ext[id]);
}

export function checkVersionSupported(
  version: string,
  supported: readonly string[],
): ProtocolError | undefined {
  if (supported.includes(version)) return undefined;
  return new ProtocolError(ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', {
    supported: [...supported],
    requested: version,
  });
}
