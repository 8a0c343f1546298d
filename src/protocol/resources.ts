// resources/list, resources/templates/list and resources/read (static resources and URI templates).
import type { JsonObject } from '../wire/jsonrpc.js';
import { invalidParams, type ProtocolError } from '../wire/protocol-error.js';
import type { CacheHints } from './cache-hints.js';
import type { ResourceTemplateDefinition } from './define.js';
import { paginate } from './pagination.js';
import type { Registry } from './registry.js';
import type { ResourceProvider } from './resource-provider.js';
import { runRound, type RoundDeps } from './run-round.js';
import type { RequestScope } from './scope.js';
import type { ReadResourceResult, ResourceContents } from './types.js';

const pick = (src: object, keys: string[]): JsonObject => {
  const out: JsonObject = {};
  for (const key of keys) {
    const value = (src as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
};

export function listResources(
  registry: Registry,
  params: JsonObject,
  pageSize: number,
  hints: CacheHints,
): JsonObject {
  const all = [...registry.resources.values()];
  const { page, nextCursor } = paginate(all, params.cursor, pageSize);
  const resources = page.map((r) =>
    pick(r, ['uri', 'name', 'title', 'description', 'mimeType', 'size', 'icons']),
  );
  const result: JsonObject = { resultType: 'complete', resources, ...hints };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  return result;
}

export function listTemplates(
  registry: Registry,
  params: JsonObject,
  pageSize: number,
  hints: CacheHints,
  providers: readonly ResourceProvider[] = [],
): JsonObject {
  const all = [
    ...[...registry.templates.values()].map((t) =>
      pick(t, ['uriTemplate', 'name', 'title', 'description', 'mimeType', 'icons']),
    ),
    ...providers.flatMap((p) => p.templates),
  ];
  const { page, nextCursor } = paginate(all, params.cursor, pageSize);
  const resourceTemplates = page;
  const result: JsonObject = { resultType: 'complete', resourceTemplates, ...hints };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  return result;
}

const templateCache = new WeakMap<ResourceTemplateDefinition, { re: RegExp; names: string[] }>();

/** Matches a URI against a level-1 RFC 6570 template (`{var}` matches one path segment). */
export function matchTemplate(
  t: ResourceTemplateDefinition,
  uri: string,
): Record<string, string> | undefined {
  let compiled = templateCache.get(t);
  if (compiled === undefined) {
    const names: string[] = [];
    const source = t.uriTemplate
      .split(/(\{[^}]+\})/)
      .map((part) => {
        const m = /^\{([^}]+)\}$/.exec(part);
        if (m === null) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        names.push(m[1] as string);
        return '([^/?#]+)';
      })
      .join('');
    compiled = { re: new RegExp(`^${source}$`), names };
    templateCache.set(t, compiled);
  }
  const m = compiled.re.exec(uri);
  if (m === null) return undefined;
  const vars: Record<string, string> = Object.create(null) as Record<string, string>;
  try {
    compiled.names.forEach((name, i) => {
      vars[name] = decodeURIComponent(m[i + 1] as string);
    });
  } catch {
    return undefined; // malformed percent-encoding: the URI names no resource of this template
  }
  return vars;
}

const toReadResult = (value: ReadResourceResult | ResourceContents[]): JsonObject =>
  Array.isArray(value) ? { contents: value } : (value as unknown as JsonObject);

export async function readResource(
  deps: RoundDeps,
  registry: Registry,
  params: JsonObject,
  scope: RequestScope,
  hints: CacheHints,
  providers: readonly ResourceProvider[] = [],
): Promise<JsonObject> {
  const uri = params.uri;
  if (typeof uri !== 'string') throw invalidParams('Invalid params: resources/read requires a string uri');
  const provider = providers.find((p) => p.owns(uri));
  if (provider !== undefined) return provider.read(uri, scope);
  const run = async (): Promise<JsonObject | undefined> => {
    const resource = registry.resources.get(uri);
    if (resource !== undefined) {
      const o = await runRound(deps, params, scope, uri, null, (ctx) => resource.read(ctx));
      return o.kind === 'done' ? { resultType: 'complete', ...toReadResult(o.value), ...hints } : o.result;
    }
    for (const template of registry.templates.values()) {
      const vars = matchTemplate(template, uri);
      if (vars === undefined) continue;
      const o = await runRound(deps, params, scope, uri, null, (ctx) => template.read(uri, vars, ctx));
      return o.kind === 'done' ? { resultType: 'complete', ...toReadResult(o.value), ...hints } : o.result;
    }
    return undefined;
  };
  const result = await run();
  if (result === undefined) throw resourceNotFound(uri);
  return result;
}

/** The spec's resource-not-found error (-32602, the URI in its data). */
export const resourceNotFound = (uri: string): ProtocolError =>
  invalidParams(`Resource not found: ${uri}`, { uri });
