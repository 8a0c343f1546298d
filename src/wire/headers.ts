// Standard request headers of Streamable HTTP 2026-07-28: presence, sentinel decoding, body match.
import { SUPPORTED_PROTOCOL_VERSIONS } from './meta-keys.js';
import { traitsOf } from './method-traits.js';
import { headerMismatch, type ProtocolError } from './protocol-error.js';

export type HeaderLookup = (lowerCaseName: string) => string | undefined;

/** No 2026-07-28 marker in the headers: MCP-Protocol-Version, if any, is not a revision the modern core serves. */
export const notModernVersionHeader = (header: HeaderLookup): boolean => {
  const version = header('mcp-protocol-version')?.trim();
  return version === undefined || !SUPPORTED_PROTOCOL_VERSIONS.includes(version);
};
export type DecodeOutcome = { ok: true; value: string } | { ok: false; reason: string };

const SENTINEL = /^=\?base64\?(.*)\?=$/s;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// Visible ASCII plus space and tab: what may travel in a header value without the sentinel.
const PLAIN = /^[\t\x20-\x7e]*$/;

/** Decodes a header value: trims it, then unwraps the `=?base64?…?=` sentinel (markers are case-sensitive). */
export function decodeHeaderValue(raw: string): DecodeOutcome {
  const value = raw.trim();
  if (!PLAIN.test(value)) return { ok: false, reason: 'contains characters not allowed in a header' };
  const m = SENTINEL.exec(value);
  if (m === null) return { ok: true, value };
  const b64 = m[1] ?? '';
  if (!BASE64.test(b64)) return { ok: false, reason: 'invalid base64 in sentinel value' };
  const bytes = Buffer.from(b64, 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (!Buffer.from(text, 'utf8').equals(bytes))
    return { ok: false, reason: 'sentinel value is not valid UTF-8' };
  return { ok: true, value: text };
}

/** Encodes a value for a header, using the base64 sentinel only when needed. */
export function encodeHeaderValue(value: string): string {
  const needsSentinel =
    !/^[\x20-\x7e]*$/.test(value) || value !== value.trim() || SENTINEL.test(value) || value.includes('\t');
  return needsSentinel ? `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=` : value;
}

/** Which body value `Mcp-Name` must mirror for a method, if any (its `nameField` in the method traits). */
export function mcpNameSource(method: string, params: Record<string, unknown> | undefined): unknown {
  const field = traitsOf(method)?.nameField;
  return field === undefined ? undefined : params?.[field];
}

/** Checks Mcp-Method and Mcp-Name against the body; runs before anything else reads the body. */
export function checkRoutingHeaders(
  header: HeaderLookup,
  method: string,
  params: Record<string, unknown> | undefined,
): ProtocolError | undefined {
  const methodHeader = header('mcp-method');
  if (methodHeader === undefined) return headerMismatch('missing Mcp-Method header');
  if (methodHeader.trim() !== method) {
    return headerMismatch(
      `Mcp-Method header value '${methodHeader.trim()}' does not match body method '${method}'`,
    );
  }
  if (traitsOf(method)?.nameField === undefined) return undefined;
  const bodyValue = mcpNameSource(method, params);
  // A malformed body (no string name/uri/taskId) is reported by the method's own validation (-32602).
  if (typeof bodyValue !== 'string') return undefined;
  const nameHeader = header('mcp-name');
  if (nameHeader === undefined) return headerMismatch(`missing Mcp-Name header for ${method}`);
  const decoded = decodeHeaderValue(nameHeader);
  if (!decoded.ok) return headerMismatch(`Mcp-Name header ${decoded.reason}`);
  if (decoded.value !== bodyValue) {
    return headerMismatch(
      `Mcp-Name header value '${decoded.value}' does not match body value '${bodyValue}'`,
    );
  }
  return undefined;
}

/** Checks MCP-Protocol-Version against the `_meta` protocol version. */
export function checkVersionHeader(header: HeaderLookup, protocolVersion: string): ProtocolError | undefined {
  const version = header('mcp-protocol-version');
  if (version === undefined) return headerMismatch('missing MCP-Protocol-Version header');
  if (version.trim() !== protocolVersion) {
    return headerMismatch(
      `MCP-Protocol-Version header value '${version.trim()}' does not match _meta protocolVersion '${protocolVersion}'`,
    );
  }
  return undefined;
}
