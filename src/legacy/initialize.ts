// `initialize` of the 2025-11-25 lifecycle: negotiates the version and opens a session.
import type { AuthInfo } from '../protocol/context.js';
import type { McpServer } from '../protocol/server.js';
import type { ClientCapabilities, Implementation } from '../wire/envelope.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
} from '../wire/meta-keys.js';
import { invalidParams } from '../wire/protocol-error.js';
import type { LegacySession, SessionRegistry } from './sessions.js';

export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

/** The server's capabilities in the legacy shape: the core's, plus logging and the legacy tasks capability. */
async function discover(
  server: McpServer,
  auth: AuthInfo,
): Promise<{ caps: JsonObject; instructions?: unknown }> {
  const outcome = await server.dispatch({
    request: {
      kind: 'request',
      id: 'legacy-initialize',
      method: 'server/discover',
      params: { _meta: { [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} } },
    },
    auth,
    signal: new AbortController().signal,
    header: undefined,
    emit: () => undefined,
  });
  const modern = outcome.ok && isJsonObject(outcome.result.capabilities) ? outcome.result.capabilities : {};
  const caps: JsonObject = {};
  // No GET stream yet: list changes and resource updates are not pushed, so none is advertised.
  if (modern.tools !== undefined) caps.tools = {};
  if (modern.prompts !== undefined) caps.prompts = {};
  if (modern.resources !== undefined) caps.resources = { subscribe: true };
  if (modern.completions !== undefined) caps.completions = {};
  caps.logging = {};
  caps.tasks = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
  return { caps, instructions: outcome.ok ? outcome.result.instructions : undefined };
}

export async function initialize(
  server: McpServer,
  sessions: SessionRegistry,
  params: JsonObject | undefined,
  auth: AuthInfo,
  now: number,
): Promise<{ session: LegacySession; result: JsonObject }> {
  if (
    params === undefined ||
    typeof params.protocolVersion !== 'string' ||
    !isJsonObject(params.capabilities)
  ) {
    throw invalidParams('Invalid params: initialize needs protocolVersion and capabilities');
  }
  const requested = params.protocolVersion;
  const protocolVersion = LEGACY_VERSIONS.includes(requested) ? requested : (LEGACY_VERSIONS[0] as string);
  const info = params.clientInfo;
  const session = await sessions.create(
    {
      owner: auth,
      protocolVersion,
      clientCapabilities: params.capabilities as ClientCapabilities,
      clientInfo:
        isJsonObject(info) && typeof info.name === 'string' && typeof info.version === 'string'
          ? ({ name: info.name, version: info.version } as Implementation)
          : undefined,
      logLevel: undefined,
    },
    now,
  );
  const { caps, instructions } = await discover(server, auth);
  const result: JsonObject = { protocolVersion, capabilities: caps, serverInfo: { ...server.info } };
  if (typeof instructions === 'string') result.instructions = instructions;
  return { session, result };
}
