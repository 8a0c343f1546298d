// Which revision a message on the shared endpoint speaks: the 2025-11-25 stateful wire or 2026-07-28.
import { notModernVersionHeader, type HeaderLookup } from '../wire/headers.js';
import { isJsonObject, type ParseOutcome } from '../wire/jsonrpc.js';
import { META_PROTOCOL_VERSION } from '../wire/meta-keys.js';

export const SESSION_HEADER = 'mcp-session-id';
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

/** No modern marker in the headers (the rule the HTTP edge also uses for the ids of its 401s). */
export const legacyVersionHeader = notModernVersionHeader;

/**
 * Whether a POST may belong to the legacy wire: it carries no modern marker (a 2026-07-28 `MCP-Protocol-Version`
 * header or `_meta` protocol version) and is either a well-formed 2025-11-25 `initialize` (protocolVersion and
 * capabilities in params), names a session, or sends a 2025 `MCP-Protocol-Version` header. A named session must then be the caller's, live or ended (the
 * endpoint checks); anything else stays on the modern path untouched.
 */
export function mayBeLegacy(parsed: ParseOutcome, header: HeaderLookup): boolean {
  if (!legacyVersionHeader(header)) return false;
  if (!parsed.ok) return header(SESSION_HEADER) !== undefined;
  const params = parsed.value.params;
  if (isJsonObject(params?._meta) && params._meta[META_PROTOCOL_VERSION] !== undefined) return false;
  if (header(SESSION_HEADER) !== undefined) return true;
  // Says it speaks an earlier revision, yet names no session: the wire tells it to initialize.
  if (LEGACY_VERSIONS.includes(header('mcp-protocol-version')?.trim() ?? '')) return true;
  return (
    parsed.value.method === 'initialize' &&
    typeof params?.protocolVersion === 'string' &&
    isJsonObject(params.capabilities)
  );
}
