// The test authorization server's endpoints other than the token endpoint: authorization (auto-approved), dynamic
// client registration (RFC 7591), revocation (RFC 7009) and device authorization (RFC 8628).
import type { ServerResponse } from 'node:http';
import {
  grantedScope,
  randomToken,
  redirectUriRegistered,
  sendError,
  sendJson,
  type AsState,
  type ClientAuthMethod,
  type RegisteredClient,
} from './oauth-as-state.js';
import { DEVICE_GRANT, grantTypes } from './oauth-token-endpoint.js';

export const AUTH_METHODS: ClientAuthMethod[] = ['none', 'client_secret_basic', 'client_secret_post'];

const absoluteUri = (value: string): boolean => {
  try {
    return new URL(value).hash === '' && !value.includes('#');
  } catch {
    return false;
  }
};

/**
 * GET /authorize, approved at once as the current subject. Returns the OAuth error, if any. An unknown client or
 * redirect URI is answered here (400); other errors go back to the redirect URI with `state` and `iss`.
 */
export function authorize(state: AsState, query: URLSearchParams, res: ServerResponse): string | undefined {
  const client = state.clients.get(query.get('client_id') ?? '');
  const redirectUri = query.get('redirect_uri') ?? '';
  if (client === undefined || !redirectUriRegistered(client, redirectUri)) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('unknown client or redirect URI');
    return client === undefined ? 'invalid_client' : 'invalid_request';
  }
  const back = (params: Record<string, string>): string | undefined => {
    const to = new URL(redirectUri);
    for (const [k, v] of Object.entries(params)) to.searchParams.set(k, v);
    const requestState = query.get('state');
    if (requestState !== null) to.searchParams.set('state', requestState);
    to.searchParams.set('iss', state.issuer);
    res.writeHead(302, { location: to.href, 'cache-control': 'no-store' }).end();
    return params.error;
  };
  if (query.get('response_type') !== 'code') return back({ error: 'unsupported_response_type' });
  const challenge = query.get('code_challenge') ?? '';
  if (query.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
    return back({ error: 'invalid_request', error_description: 'PKCE with S256 is required' });
  if ((query.get('state') ?? '') === '')
    return back({ error: 'invalid_request', error_description: 'state is required' });
  const resource = query.get('resource');
  if (resource === null || !absoluteUri(resource))
    return back({ error: 'invalid_target', error_description: 'one absolute resource URI is required' });
  if (!client.grantTypes.includes('authorization_code')) return back({ error: 'unauthorized_client' });
  const scope = grantedScope(state, query.get('scope'));
  if (scope === undefined) return back({ error: 'invalid_scope' });
  const code = randomToken();
  state.codes.set(code, {
    clientId: client.clientId,
    sub: state.subject,
    scope,
    resource,
    redirectUri,
    codeChallenge: challenge,
    expiresAt: Date.now() + 60_000,
  });
  return back({ code });
}

/** A redirect URI a client may register: https, or http on a loopback host (RFC 8252). */
const redirectUriAllowed = (uri: unknown): boolean => {
  if (typeof uri !== 'string' || !absoluteUri(uri)) return false;
  const u = new URL(uri);
  return (
    u.protocol === 'https:' ||
    (u.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(u.hostname))
  );
};

/** POST /register: returns the new client's id, or the OAuth error sent. */
export function register(
  state: AsState,
  body: unknown,
  res: ServerResponse,
): { clientId?: string; error?: string } {
  const meta = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const refuse = (error: string, description: string) => {
    sendError(res, 400, error, description);
    return { error };
  };
  const method = (meta.token_endpoint_auth_method ?? 'client_secret_basic') as ClientAuthMethod;
  if (!AUTH_METHODS.includes(method)) return refuse('invalid_client_metadata', 'unsupported auth method');
  const grants = meta.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!Array.isArray(grants) || !grants.every((g) => grantTypes(state).includes(g as string)))
    return refuse('invalid_client_metadata', 'unsupported grant type');
  const redirectUris = meta.redirect_uris ?? [];
  if (!Array.isArray(redirectUris) || !redirectUris.every(redirectUriAllowed))
    return refuse('invalid_redirect_uri', 'redirect URIs must be https or loopback http');
  if (grants.includes('authorization_code') && redirectUris.length === 0)
    return refuse('invalid_redirect_uri', 'redirect_uris are required');
  if (grants.includes('client_credentials') && method === 'none')
    return refuse('invalid_client_metadata', 'client credentials need a secret');
  const client: RegisteredClient = {
    clientId: `client-${randomToken(9)}`,
    clientSecret: method === 'none' ? undefined : randomToken(),
    authMethod: method,
    redirectUris: redirectUris as string[],
    grantTypes: grants as string[],
    registeredBy: 'dynamic',
  };
  state.clients.set(client.clientId, client);
  sendJson(res, 201, {
    ...meta,
    client_id: client.clientId,
    client_id_issued_at: Math.floor(Date.now() / 1000),
    ...(client.clientSecret === undefined
      ? {}
      : { client_secret: client.clientSecret, client_secret_expires_at: 0 }),
    token_endpoint_auth_method: method,
    grant_types: client.grantTypes,
    redirect_uris: client.redirectUris,
    response_types: ['code'],
  });
  return { clientId: client.clientId };
}

/** POST /revoke of an authenticated client: its refresh token stops working; any token it names is recorded. */
export function revoke(
  state: AsState,
  form: URLSearchParams,
  client: RegisteredClient,
  res: ServerResponse,
): void {
  const token = form.get('token');
  if (token === null) {
    sendError(res, 400, 'invalid_request', 'token is required');
    return;
  }
  const issued = state.issued.find((t) => t.value === token && t.clientId === client.clientId);
  if (issued !== undefined) {
    state.revoked.add(token);
    state.refreshTokens.delete(token);
  }
  // RFC 7009 §2.2: an unknown or already invalid token is answered 200 as well.
  res.writeHead(200, { 'cache-control': 'no-store' }).end();
}

/** POST /device_authorization of an authenticated client; returns the OAuth error sent, if any. */
export function deviceAuthorization(
  state: AsState,
  form: URLSearchParams,
  client: RegisteredClient,
  res: ServerResponse,
): string | undefined {
  if (!client.grantTypes.includes(DEVICE_GRANT)) {
    sendError(res, 400, 'unauthorized_client');
    return 'unauthorized_client';
  }
  const scope = grantedScope(state, form.get('scope'));
  if (scope === undefined) {
    sendError(res, 400, 'invalid_scope');
    return 'invalid_scope';
  }
  const resource = form.get('resource') ?? undefined;
  const deviceCode = randomToken();
  const letters = randomToken(12)
    .replace(/[^A-Za-z]/g, '')
    .toUpperCase()
    .padEnd(8, 'X');
  const userCode = `${letters.slice(0, 4)}-${letters.slice(4, 8)}`;
  const expiresIn = 600;
  state.devices.set(deviceCode, {
    clientId: client.clientId,
    sub: state.subject,
    scope,
    resource,
    userCode,
    expiresAt: Date.now() + expiresIn * 1000,
    approved: false,
    used: false,
  });
  sendJson(res, 200, {
    device_code: deviceCode,
    user_code: userCode,
    verification_uri: `${state.issuer}/device`,
    verification_uri_complete: `${state.issuer}/device?user_code=${encodeURIComponent(userCode)}`,
    expires_in: expiresIn,
    interval: 1,
  });
  return undefined;
}

/** Approves the device authorization with this user code, as the person who entered it would. */
export function approveDevice(state: AsState, userCode: string): boolean {
  const device = [...state.devices.values()].find((d) => d.userCode === userCode && !d.used);
  if (device === undefined || device.expiresAt < Date.now()) return false;
  device.approved = true;
  device.sub = state.subject;
  return true;
}
