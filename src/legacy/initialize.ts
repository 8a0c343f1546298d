// `initialize` of the 2025-11-25 lifecycle: negotiates the version and opens a session.
import type { AuthInfo } from '../protocol/tool-types.js';
import type { McpServer } from '../protocol/server.js';
import type { ClientCapabilities, Implementation } from '../wire/envelope.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
} from '../wire/meta-keys.js';
import { invalidParams } from '../wire/protocol-error.js';
import { LEGACY_VERSIONS } from './era.js';
import type { LegacySession, SessionRegistry } from './sessions.js';

/** The first revision with the `tasks` capability. */
const TASKS_SINCE = '2025-11-25';

/** The server's capabilities in the negotiated revision's shape: the core's, logging, and tasks from 2025-11-25. */
async function discover(
  server: McpServer,
  auth: AuthInfo,
  canList: boolean,
  protocolVersion: string,
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
  // List changes and resource updates reach the session's GET stream, as the core announces them.
  for (const key of ['tools', 'prompts', 'resources', 'completions'] as const) {
    if (isJsonObject(modern[key])) caps[key] = { ...modern[key] };
  }
  caps.logging = {};
  // Tasks came with 2025-11-25: an earlier revision has no such capability (revisions are dates: they sort).
  if (protocolVersion >= TASKS_SINCE) {
    caps.tasks = { cancel: {}, requests: { tools: { call: {} } }, ...(canList ? { list: {} } : {}) };
  }
  return { caps, instructions: outcome.ok ? outcome.result.instructions : undefined };
}

export async function initialize(
  server: McpServer,
  sessions: SessionRegistry,
  params: JsonObject | undefined,
  auth: AuthInfo,
  now: number,
  canList: boolean,
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
      protocolVersion,
      clientCapabilities: params.capabilities as ClientCapabilities,
      clientInfo:
        isJsonObject(info) && typeof info.name === 'string' && typeof info.version === 'string'
          ? ({ name: info.name, version: info.version } as Implementation)
          : undefined,
      logLevel: undefined,
      subscriptions: [],
    },
    auth,
    now,
  );
  const { caps, instructions } = await discover(server, auth, canList, protocolVersion);
  const result: JsonObject = { protocolVersion, capabilities: caps, serverInfo: { ...server.info } };
  if (typeof instructions === 'string') result.instructions = instructions;
  return { session, result };
}
