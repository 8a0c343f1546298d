// The steps that get tokens: a full sign-in (client credentials for a machine client, else a person's approval
// through the prompt), a refresh, and the answer to a server's challenge (refresh, sign in again, or step up to the
// union of the granted and the challenged scopes).
import { assertPkceS256, authorizeWithCode } from './authorize.js';
import { parseBearerChallenge } from './challenge.js';
import { authorizeWithDevice } from './device.js';
import { obtainClient } from './registration.js';
import { hasScopes, selectScope, unionScopes, withOfflineAccess } from './scopes.js';
import {
  authorizationServer,
  discover,
  httpOf,
  recordFor,
  saveRecord,
  tokenContext,
  type Discovered,
  type SessionState,
} from './session-state.js';
import { clientCredentialsTokens, refreshTokens } from './tokens.js';
import { OAuthFlowError, SignInRequiredError, type OAuthClientInfo, type SignInRecord } from './types.js';

/** The same redirect target, the port aside (a loopback redirect listens on whatever port is free, RFC 8252 §7.3). */
function sameRedirect(a: string, b: string): boolean {
  const x = new URL(a);
  const y = new URL(b);
  return x.protocol === y.protocol && x.hostname === y.hostname && x.pathname === y.pathname;
}

/** The kept client if it still fits (same pre-registered id, a redirect URI like the prompt's), else a new one. */
async function clientFor(
  s: SessionState,
  d: Discovered,
  record: SignInRecord | undefined,
  signal?: AbortSignal,
): Promise<OAuthClientInfo> {
  const redirectUri = s.machine ? undefined : s.options.prompt?.redirectUri;
  const kept = record?.client;
  const fits =
    kept !== undefined &&
    (s.options.client === undefined || kept.clientId === s.options.client.clientId) &&
    (kept.registeredBy !== 'dynamic' ||
      redirectUri === undefined ||
      (kept.redirectUris ?? []).some((u) => sameRedirect(u, redirectUri)));
  return fits ? kept : obtainClient(httpOf(s, signal), d.as, s.options, redirectUri);
}

/** A full sign-in with `scope`: client credentials for a machine client, else the prompt's authorization. */
export async function signInWith(
  s: SessionState,
  d: Discovered,
  scope: string | undefined,
  signal?: AbortSignal,
): Promise<SignInRecord> {
  const record = await recordFor(s, d);
  if (s.machine) {
    if (s.options.client === undefined)
      throw new OAuthFlowError('client credentials need a pre-registered client');
    const client = await clientFor(s, d, record, signal);
    const ctx = await tokenContext(s, d.as, d.info.resource, client, signal);
    return saveRecord(s, d, client, await clientCredentialsTokens(ctx, scope));
  }
  const prompt = s.options.prompt;
  if (prompt === undefined) throw new SignInRequiredError(d.info.resource);
  const device = prompt.device !== undefined && d.as.device_authorization_endpoint !== undefined;
  if (!device) assertPkceS256(d.as);
  const client = await clientFor(s, d, record, signal);
  const ctx = await tokenContext(s, d.as, d.info.resource, client, signal);
  const wanted = withOfflineAccess(scope, d.as.scopes_supported);
  const tokens =
    device && prompt.device !== undefined
      ? await authorizeWithDevice(ctx, prompt.device, wanted)
      : await authorizeWithCode(ctx, prompt, wanted);
  return saveRecord(s, d, client, tokens);
}

/** New tokens by the record's refresh token; undefined (and the tokens forgotten) when the server refuses it. */
export async function refresh(
  s: SessionState,
  record: SignInRecord,
  signal?: AbortSignal,
): Promise<SignInRecord | undefined> {
  const tokens = record.tokens;
  if (tokens?.refreshToken === undefined) return undefined;
  const as =
    s.known?.as.issuer === record.issuer ? s.known.as : await authorizationServer(s, record.issuer, signal);
  const ctx = await tokenContext(s, as, record.resource, record.client, signal);
  const updatedAt = (): string => new Date(s.now()).toISOString();
  try {
    const fresh = await refreshTokens(ctx, tokens);
    const next: SignInRecord = { ...record, tokens: fresh, updatedAt: updatedAt() };
    await s.store.set(next);
    return next;
  } catch (err) {
    if (!(err instanceof OAuthFlowError) || err.code === undefined) throw err;
    const { tokens: _dropped, ...withoutTokens } = record;
    await s.store.set({ ...withoutTokens, updatedAt: updatedAt() });
    return undefined;
  }
}

/** The first scope to ask for: given > challenged > the resource's scopes_supported; with what was granted. */
function firstScope(s: SessionState, d: Discovered, challenged: string | undefined, granted?: string) {
  const scope = selectScope({
    ...(s.options.scope === undefined ? {} : { requested: s.options.scope }),
    ...(challenged === undefined ? {} : { challenged }),
    ...(d.info.scopesSupported === undefined ? {} : { scopesSupported: d.info.scopesSupported }),
  });
  return unionScopes(granted, scope);
}

/** Answers a 401 or an `insufficient_scope` 403: the new record, or undefined when the response stands. */
export async function answerChallenge(
  s: SessionState,
  response: Response,
  signal?: AbortSignal,
): Promise<SignInRecord | undefined> {
  const c = parseBearerChallenge(response.headers.get('www-authenticate'));
  const d = await discover(s, signal, c.resourceMetadata);
  const record = await recordFor(s, d);
  const granted = record?.tokens?.scope;
  if (response.status === 403) {
    // Step-up: the union of what was granted and what is asked; nothing new to ask means the answer stands.
    if (c.scope === undefined || (record?.tokens !== undefined && hasScopes(granted, c.scope)))
      return undefined;
    return signInWith(s, d, unionScopes(granted, c.scope), signal);
  }
  // A refresh first, unless the token refused is one a refresh on a 401 just gave: then the grant itself is gone.
  const tokens = record?.tokens;
  if (record !== undefined && tokens?.refreshToken !== undefined && !s.machine) {
    if (tokens.accessToken !== s.refreshedOnChallenge) {
      const refreshed = await refresh(s, record, signal).catch(() => undefined);
      s.refreshedOnChallenge = refreshed?.tokens?.accessToken;
      if (refreshed !== undefined) return refreshed;
    }
  }
  return signInWith(s, d, firstScope(s, d, c.scope, granted), signal);
}

/** A sign-in on purpose, with `scope` or the resource's defaults. */
export async function signInNow(s: SessionState, scope: string | undefined, signal?: AbortSignal) {
  const d = await discover(s, signal);
  const wanted = scope ?? firstScope(s, d, undefined);
  return signInWith(s, d, wanted, signal);
}
