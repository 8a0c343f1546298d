// Which revision a message on the shared endpoint speaks: the 2025-11-25 stateful wire or 2026-07-28.
import type { HeaderLookup } from '../wire/headers.js';
import { isJsonObject, type ParseOutcome } from '../wire/jsonrpc.js';
import { LATEST_PROTOCOL_VERSION, META_PROTOCOL_VERSION } from '../wire/meta-keys.js';

export const SESSION_HEADER = 'mcp-session-id';

/**
 * Legacy when the message names a known session, or is a well-formed 2025-11-25 `initialize` (protocolVersion and
 * capabilities in params) carrying neither the modern `_meta` protocol version nor a 2026-07-28
 * `MCP-Protocol-Version` header. Everything else, unknown sessions included, stays on the modern path untouched:
 * without a live session an old client gets a 400 or 404 error there and starts over with `initialize`.
 */
export function isLegacyMessage(
  parsed: ParseOutcome,
  header: HeaderLookup,
  knownSession: (id: string) => boolean,
): boolean {
  const session = header(SESSION_HEADER);
  if (session !== undefined && knownSession(session)) return true;
  if (!parsed.ok) return false;
  if (header('mcp-protocol-version') === LATEST_PROTOCOL_VERSION) return false;
  const meta = parsed.value.params?._meta;
  if (isJsonObject(meta) && meta[META_PROTOCOL_VERSION] !== undefined) return false;
  const params = parsed.value.params;
  return (
    parsed.value.method === 'initialize' &&
    typeof params?.protocolVersion === 'string' &&
    isJsonObject(params.capabilities)
  );
}
