// The test authorization server's token endpoint: authorization code with PKCE, refresh with rotation, client
// credentials and the device code grant, each answering JWT access tokens for the requested resource.
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { SignJWT } from 'jose';
import {
  grantedScope,
  randomToken,
  sendError,
  sendJson,
  type AsState,
  type Grant,
  type RegisteredClient,
} from './oauth-as-state.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

type Outcome = { ok: true; grant: Grant; refresh: boolean } | { ok: false; status: number; error: string };

const fail = (error: string, status = 400): Outcome => ({ ok: false, status, error });

/**
 * A signed access token for `grant`. Its `exp` is the lifetime minus `verifierLeewaySeconds`, so a resource server
 * that tolerates that much clock skew refuses it when `expires_in` says it ends (within the second after).
 */
export async function mintAccessToken(
  state: AsState,
  grant: Grant,
  lifetimeSeconds?: number,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const lifetime = lifetimeSeconds ?? state.options.accessTokenLifetimeSeconds;
  // Rounded up: a token lives at least its lifetime (between it and one second more), never less.
  const expires = Math.ceil(Date.now() / 1000) + lifetime - state.options.verifierLeewaySeconds;
  const jwt = new SignJWT({ scope: grant.scope, client_id: grant.clientId })
    .setProtectedHeader({ alg: state.options.algorithm, kid: state.key.kid, typ: 'at+jwt' })
    .setIssuer(state.issuer)
    .setSubject(grant.sub)
    .setIssuedAt(now)
    .setJti(randomToken(12))
    .setExpirationTime(expires);
  if (grant.resource !== undefined) jwt.setAudience(grant.resource);
  return jwt.sign(state.key.privateKey);
}

function authorizationCode(state: AsState, form: URLSearchParams, client: RegisteredClient): Outcome {
  const code = form.get('code') ?? '';
  const entry = state.codes.get(code);
  state.codes.delete(code); // one use, whatever the outcome
  if (entry === undefined || entry.clientId !== client.clientId || entry.expiresAt < Date.now())
    return fail('invalid_grant');
  if (form.get('redirect_uri') !== entry.redirectUri) return fail('invalid_grant');
  const verifier = form.get('code_verifier') ?? '';
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier) || challenge !== entry.codeChallenge)
    return fail('invalid_grant');
  const resource = form.get('resource');
  if (resource !== null && resource !== entry.resource) return fail('invalid_target');
  const { clientId, sub, scope } = entry;
  return { ok: true, grant: { clientId, sub, scope, resource: entry.resource }, refresh: true };
}

function refreshToken(state: AsState, form: URLSearchParams, client: RegisteredClient): Outcome {
  const token = form.get('refresh_token') ?? '';
  const grant = state.refreshTokens.get(token);
  if (grant === undefined || grant.clientId !== client.clientId) return fail('invalid_grant');
  state.refreshTokens.delete(token); // rotation: the old refresh token is spent
  const asked = form.get('scope');
  const scope = asked === null ? grant.scope : asked;
  if (!scope.split(' ').every((s) => grant.scope.split(' ').includes(s))) return fail('invalid_scope');
  const resource = form.get('resource');
  if (resource !== null && resource !== grant.resource) return fail('invalid_target');
  return { ok: true, grant: { ...grant, scope }, refresh: true };
}

function clientCredentials(state: AsState, form: URLSearchParams, client: RegisteredClient): Outcome {
  if (client.authMethod === 'none') return fail('unauthorized_client');
  const scope = grantedScope(state, form.get('scope'));
  if (scope === undefined) return fail('invalid_scope');
  const resource = form.get('resource') ?? undefined;
  return {
    ok: true,
    grant: { clientId: client.clientId, sub: client.clientId, scope, resource },
    refresh: false,
  };
}

function deviceCode(state: AsState, form: URLSearchParams, client: RegisteredClient): Outcome {
  const device = state.devices.get(form.get('device_code') ?? '');
  if (device === undefined || device.clientId !== client.clientId || device.used)
    return fail('invalid_grant');
  if (device.expiresAt < Date.now()) return fail('expired_token');
  if (!device.approved) return fail('authorization_pending');
  device.used = true;
  const { clientId, sub, scope, resource } = device;
  return { ok: true, grant: { clientId, sub, scope, resource }, refresh: true };
}

const GRANTS: Record<string, (state: AsState, form: URLSearchParams, client: RegisteredClient) => Outcome> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
  [DEVICE_GRANT]: deviceCode,
};

export const grantTypes = (state: AsState): string[] =>
  Object.keys(GRANTS).filter((g) => g !== DEVICE_GRANT || state.options.deviceGrant);

/** Answers a token request of an authenticated client; returns the OAuth error sent, if any. */
export async function tokenResponse(
  state: AsState,
  form: URLSearchParams,
  client: RegisteredClient,
  res: ServerResponse,
): Promise<string | undefined> {
  const grantType = form.get('grant_type') ?? '';
  const handler = grantTypes(state).includes(grantType) ? GRANTS[grantType] : undefined;
  if (handler === undefined || !client.grantTypes.includes(grantType)) {
    const error = handler === undefined ? 'unsupported_grant_type' : 'unauthorized_client';
    sendError(res, 400, error);
    return error;
  }
  const outcome = handler(state, form, client);
  if (!outcome.ok) {
    sendError(res, outcome.status, outcome.error);
    return outcome.error;
  }
  const { grant } = outcome;
  const accessToken = await mintAccessToken(state, grant);
  const issued = {
    grantType,
    clientId: grant.clientId,
    sub: grant.sub,
    scope: grant.scope,
    resource: grant.resource,
  };
  state.issued.push({ kind: 'access', value: accessToken, ...issued });
  let refreshToken: string | undefined;
  if (outcome.refresh && client.grantTypes.includes('refresh_token')) {
    refreshToken = randomToken();
    state.refreshTokens.set(refreshToken, grant);
    state.issued.push({ kind: 'refresh', value: refreshToken, ...issued });
  }
  sendJson(res, 200, {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: state.options.accessTokenLifetimeSeconds,
    scope: grant.scope,
    ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
  });
  return undefined;
}
