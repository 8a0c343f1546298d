// What one sign-in session holds (its settings, what was discovered, the refresh or sign-in in flight) and the small
// steps on it: discovery with caching, finding and saving the kept record, a token request's context.
import type * as oauth from 'oauth4webapi';
import {
  canonicalResource,
  discoverAuthorizationServer,
  discoverResource,
  resourceCovers,
  type ResourceInfo,
} from './discovery.js';
import type { HttpContext } from './http.js';
import { createMemoryTokenStore } from './memory-store.js';
import { importClientKey } from './private-key.js';
import type { TokenRequestContext } from './tokens.js';
import type {
  ClientCredentialsOptions,
  OAuthClientInfo,
  OAuthOptions,
  OAuthTokenSet,
  SignInRecord,
  TokenStore,
} from './types.js';

/** Where the server's tokens come from, as last discovered. */
export interface Discovered {
  info: ResourceInfo;
  as: oauth.AuthorizationServer;
}

export interface SessionState {
  options: OAuthOptions;
  store: TokenStore;
  now: () => number;
  skewMs: number;
  /** The MCP server URL without fragment. */
  serverUrl: string;
  fetch: typeof fetch;
  /** A machine client: tokens by the client credentials grant. */
  machine: boolean;
  keyOptions?: ClientCredentialsOptions;
  servers: Map<string, oauth.AuthorizationServer>;
  known?: Discovered;
  privateKey?: Promise<oauth.PrivateKey>;
  flight?: Promise<SignInRecord | undefined>;
  /** The access token the last refresh made on a 401 gave (refused again, it calls for a full sign-in). */
  refreshedOnChallenge?: string | undefined;
}

export function createSessionState(options: OAuthOptions): SessionState {
  const machine = options.clientCredentials !== undefined && options.clientCredentials !== false;
  const state: SessionState = {
    options,
    store: options.store ?? createMemoryTokenStore(),
    now: options.now ?? Date.now,
    skewMs: options.refreshSkewMs ?? 60_000,
    serverUrl: canonicalResource(options.serverUrl),
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    machine,
    servers: new Map(),
  };
  if (typeof options.clientCredentials === 'object') state.keyOptions = options.clientCredentials;
  return state;
}

export const httpOf = (s: SessionState, signal?: AbortSignal): HttpContext => ({
  fetch: s.fetch,
  ...(signal ? { signal } : {}),
});

/** One refresh or sign-in at a time; a caller arriving meanwhile shares the one in flight. */
export function single(
  s: SessionState,
  run: () => Promise<SignInRecord | undefined>,
): Promise<SignInRecord | undefined> {
  if (s.flight !== undefined) return s.flight;
  const current = run().finally(() => {
    if (s.flight === current) delete s.flight;
  });
  s.flight = current;
  return current;
}

export async function authorizationServer(
  s: SessionState,
  issuer: string,
  signal?: AbortSignal,
): Promise<oauth.AuthorizationServer> {
  const cached = s.servers.get(issuer);
  if (cached !== undefined) return cached;
  const as = await discoverAuthorizationServer(httpOf(s, signal), issuer);
  s.servers.set(issuer, as);
  return as;
}

/** The resource's metadata (from `hint` when a challenge gave one) and its first authorization server's. */
export async function discover(s: SessionState, signal?: AbortSignal, hint?: string): Promise<Discovered> {
  const info = await discoverResource(httpOf(s, signal), s.serverUrl, hint);
  const as = await authorizationServer(s, info.authorizationServers[0] as string, signal);
  s.known = { info, as };
  return s.known;
}

/** The kept sign-in of this server: by its resource once known, else the closest record covering the server URL. */
export async function loadRecord(s: SessionState): Promise<SignInRecord | undefined> {
  if (s.known !== undefined) return s.store.get(s.known.info.resource);
  const direct = await s.store.get(s.serverUrl);
  if (direct !== undefined) return direct;
  const covering = (await s.store.list()).filter((r) => resourceCovers(r.resource, s.serverUrl));
  return covering.sort((a, b) => b.resource.length - a.resource.length)[0];
}

/** The record of `d`'s resource, unless it came from another authorization server (then it is forgotten). */
export async function recordFor(s: SessionState, d: Discovered): Promise<SignInRecord | undefined> {
  const record = await s.store.get(d.info.resource);
  if (record === undefined || record.issuer === d.as.issuer) return record;
  await s.store.delete(d.info.resource);
  return undefined;
}

export async function saveRecord(
  s: SessionState,
  d: Discovered,
  client: OAuthClientInfo,
  tokens: OAuthTokenSet,
): Promise<SignInRecord> {
  const record: SignInRecord = {
    resource: d.info.resource,
    issuer: d.as.issuer,
    client,
    tokens,
    updatedAt: new Date(s.now()).toISOString(),
  };
  await s.store.set(record);
  return record;
}

/** What a token request to `as` for `resource` needs (the private key imported once, for private_key_jwt). */
export async function tokenContext(
  s: SessionState,
  as: oauth.AuthorizationServer,
  resource: string,
  client: OAuthClientInfo,
  signal?: AbortSignal,
): Promise<TokenRequestContext> {
  const ctx: TokenRequestContext = { http: httpOf(s, signal), as, client, resource, now: s.now };
  if (client.authMethod === 'private_key_jwt' && s.keyOptions !== undefined) {
    s.privateKey ??= importClientKey(s.keyOptions);
    ctx.privateKey = await s.privateKey;
  }
  return ctx;
}

/** True when the tokens expire within the refresh skew. */
export const expiring = (s: SessionState, tokens: OAuthTokenSet): boolean =>
  tokens.expiresAt !== undefined && tokens.expiresAt - s.skewMs <= s.now();
