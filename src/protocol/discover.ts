// The server/discover result: what the registry and the extensions advertise. It changes only with the registry
// (a tool, prompt or resource added or removed), so it is built and serialised once per registry version.
import { memoizeSerialization, type JsonObject } from '../wire/jsonrpc.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../wire/meta-keys.js';
import { advertises } from './advertised.js';
import type { Registry } from './registry.js';
import type { ResourceProvider } from './resource-provider.js';

/** What of an extension discover shows: its id and its capability. */
interface Advertised {
  id: string;
  capability: JsonObject;
}

/** What the discover result is built from, fixed when the server is built (the registry changes; the rest does not). */
export interface DiscoverSource {
  registry: Registry;
  extensions: readonly Advertised[];
  providers: readonly ResourceProvider[];
  instructions?: string;
  ttlMs: number;
  serverMeta: JsonObject;
}

/** The capabilities server/discover advertises: what is registered, and each extension's. */
export function capabilitiesOf(
  registry: Registry,
  extensions: readonly Advertised[],
  providers: number,
): JsonObject {
  const caps: JsonObject = { tools: { listChanged: true } };
  if (advertises(registry, 'prompts', providers)) caps.prompts = { listChanged: true };
  if (advertises(registry, 'resources', providers)) caps.resources = { subscribe: true, listChanged: true };
  if (advertises(registry, 'completions', providers)) caps.completions = {};
  if (extensions.length > 0)
    caps.extensions = Object.fromEntries(extensions.map((e) => [e.id, e.capability]));
  return caps;
}

/**
 * The discover result for the registry as it is now: one object per registry version, its JSON computed once. Each
 * request gets the same object, which nothing may change (the dispatch leaves a result with its `_meta` alone).
 */
export function discoverResult(source: DiscoverSource): () => JsonObject {
  let cached: JsonObject | undefined;
  let cachedVersion = -1;
  return () => {
    const { registry } = source;
    if (cached !== undefined && cachedVersion === registry.version) return cached;
    const result: JsonObject = {
      resultType: 'complete',
      supportedVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
      capabilities: capabilitiesOf(registry, source.extensions, source.providers.length),
      ttlMs: source.ttlMs,
      cacheScope: 'public',
    };
    if (source.instructions !== undefined) result.instructions = source.instructions;
    result._meta = source.serverMeta;
    cached = memoizeSerialization(result);
    cachedVersion = registry.version;
    return cached;
  };
}
