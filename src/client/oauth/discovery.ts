// Finding who signs in for an MCP server: its protected-resource metadata (RFC 9728: the challenge's
// `resource_metadata`, else the well-known URLs, path-inserted then root) and its authorization server's metadata
// (RFC 8414 and OpenID Connect Discovery, in the MCP order), each checked against where it was looked for.
import * as oauth from 'oauth4webapi';
import { assertSecureUrl, getJson, type HttpContext } from './http.js';
import { OAuthFlowError } from './types.js';

/** What a protected resource says of itself. */
export interface ResourceInfo {
  /** The resource identifier tokens are asked for (`resource` parameter). */
  resource: string;
  authorizationServers: string[];
  scopesSupported?: string[];
}

/** The MCP server URL as a resource identifier: no fragment. */
export function canonicalResource(serverUrl: string): string {
  const u = new URL(serverUrl);
  u.hash = '';
  return u.href;
}

/** True when `resource` covers `serverUrl`: the same origin, and the server's path is at or under the resource's. */
export function resourceCovers(resource: string, serverUrl: string): boolean {
  let r: URL;
  let s: URL;
  try {
    r = new URL(resource);
    s = new URL(serverUrl);
  } catch {
    return false;
  }
  if (r.hash !== '' || r.origin !== s.origin) return false;
  const base = r.pathname.endsWith('/') ? r.pathname : `${r.pathname}/`;
  return s.pathname === r.pathname || s.pathname.startsWith(base);
}

function wellKnownResourceUrls(serverUrl: string): string[] {
  const u = new URL(serverUrl);
  const root = `${u.origin}/.well-known/oauth-protected-resource`;
  const path = u.pathname.replace(/\/$/, '');
  return path === '' ? [root] : [`${root}${path}`, root];
}

async function readResource(
  http: HttpContext,
  url: string,
  serverUrl: string,
): Promise<ResourceInfo | undefined> {
  const res = await getJson(http, url);
  if (res === undefined || res.status !== 200) {
    await res?.body?.cancel();
    return undefined;
  }
  let body: Record<string, unknown>;
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof body.resource !== 'string') return undefined;
  if (!resourceCovers(body.resource, serverUrl))
    throw new OAuthFlowError(
      `the protected-resource metadata names resource ${body.resource}, which is not ${serverUrl}: refusing to sign in`,
    );
  const servers = Array.isArray(body.authorization_servers)
    ? body.authorization_servers.filter((s): s is string => typeof s === 'string')
    : [];
  const info: ResourceInfo = { resource: body.resource, authorizationServers: servers };
  if (Array.isArray(body.scopes_supported))
    info.scopesSupported = body.scopes_supported.filter((s): s is string => typeof s === 'string');
  return info;
}

/**
 * The protected-resource metadata of `serverUrl`: from `hint` (a challenge's `resource_metadata`), else the
 * well-known URLs. Without any, the server's origin is taken as its authorization server (as before RFC 9728).
 */
export async function discoverResource(
  http: HttpContext,
  serverUrl: string,
  hint?: string,
): Promise<ResourceInfo> {
  const candidates = wellKnownResourceUrls(serverUrl);
  if (hint !== undefined) {
    assertSecureUrl(hint, 'resource_metadata');
    candidates.unshift(hint);
  }
  for (const url of candidates) {
    const info = await readResource(http, url, serverUrl);
    if (info !== undefined) {
      if (info.authorizationServers.length === 0)
        throw new OAuthFlowError(`the protected-resource metadata at ${url} names no authorization server`);
      return info;
    }
  }
  return { resource: canonicalResource(serverUrl), authorizationServers: [new URL(serverUrl).origin] };
}

/** The metadata URLs of issuer `issuer`, in the MCP order (OAuth path-inserted, OpenID path-inserted, appended). */
export function authorizationServerMetadataUrls(issuer: string): string[] {
  const u = new URL(issuer);
  const path = u.pathname.replace(/\/$/, '');
  if (path === '')
    return [
      `${u.origin}/.well-known/oauth-authorization-server`,
      `${u.origin}/.well-known/openid-configuration`,
    ];
  return [
    `${u.origin}/.well-known/oauth-authorization-server${path}`,
    `${u.origin}/.well-known/openid-configuration${path}`,
    `${u.origin}${path}/.well-known/openid-configuration`,
  ];
}

/** The metadata of authorization server `issuer`; its `issuer` must be the one it was looked up by. */
export async function discoverAuthorizationServer(
  http: HttpContext,
  issuer: string,
): Promise<oauth.AuthorizationServer> {
  const expected = assertSecureUrl(issuer, 'the authorization server');
  for (const url of authorizationServerMetadataUrls(issuer)) {
    const res = await getJson(http, url);
    if (res === undefined) continue;
    if (res.status !== 200) {
      await res.body?.cancel();
      continue;
    }
    let as: oauth.AuthorizationServer;
    try {
      as = await oauth.processDiscoveryResponse(expected, res);
    } catch (err) {
      const mismatch =
        err instanceof oauth.OperationProcessingError && err.code === oauth.JSON_ATTRIBUTE_COMPARISON;
      throw new OAuthFlowError(
        mismatch
          ? `the authorization server metadata at ${url} names another issuer than ${issuer}: refusing to sign in`
          : `the authorization server metadata at ${url} is unusable (${err instanceof Error ? err.message : 'unreadable'})`,
      );
    }
    return as;
  }
  throw new OAuthFlowError(`no authorization server metadata found for ${issuer}`);
}
