// A small OAuth 2.1 authorization server for tests, on 127.0.0.1: RFC 8414 metadata, JWKS, an auto-approving
// authorization endpoint (PKCE S256, `resource`, `iss`), JWT access tokens, refresh with rotation, client
// credentials, the device grant, dynamic registration and revocation. It records every request without its secrets.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JSONWebKeySet } from 'jose';
import {
  authenticateClient,
  randomToken,
  readBody,
  sendError,
  sendJson,
  type AsState,
  type ClientAuthMethod,
  type IssuedToken,
  type RecordedRequest,
  type RegisteredClient,
} from './oauth-as-state.js';
import {
  AUTH_METHODS,
  approveDevice,
  authorize,
  deviceAuthorization,
  register,
  revoke,
} from './oauth-client-endpoints.js';
import { DEVICE_GRANT, grantTypes, mintAccessToken, tokenResponse } from './oauth-token-endpoint.js';

export type { IssuedToken, RecordedRequest, RegisteredClient };

export interface PreRegisteredClient {
  clientId: string;
  clientSecret?: string;
  /** Default: `client_secret_basic` with a secret, else `none`. */
  authMethod?: ClientAuthMethod;
  redirectUris?: string[];
  /** Default: authorization code, refresh and device code, plus client credentials for a client with a secret. */
  grantTypes?: string[];
}

export interface AuthorizationServerOptions {
  /** What `expires_in` says (default 3600). */
  accessTokenLifetimeSeconds?: number;
  /**
   * The clock skew the resource server tolerates: taken off each token's `exp`, so that the token is refused when
   * `expires_in` says it ends (default 0).
   */
  verifierLeewaySeconds?: number;
  /** `scopes_supported`; a request without a scope gets them all (default `mcp`). */
  scopes?: string[];
  /** Offer the device authorization grant (default true). */
  deviceGrant?: boolean;
  /** Offer dynamic client registration (default true). */
  registration?: boolean;
  /** Offer token revocation (default true). */
  revocation?: boolean;
  algorithm?: 'ES256' | 'RS256';
  /** The subject of the person who approves (default `user-1`). */
  subject?: string;
  preRegisteredClients?: PreRegisteredClient[];
}

export interface AuthorizationServer {
  /** `http://127.0.0.1:PORT`, also the base of every endpoint. */
  issuer: string;
  /** The RFC 8414 metadata document's URL. */
  url: string;
  /** The public keys (as `/jwks` serves them): write them to a file for `serve --jwks FILE`. */
  jwks: JSONWebKeySet;
  /** Every request, in order, without codes, verifiers, secrets or tokens. */
  requests: RecordedRequest[];
  /** Every token handed out (to look for where it must not be). */
  issued: IssuedToken[];
  /** Tokens revoked through the revocation endpoint. */
  revoked: Set<string>;
  clients: Map<string, RegisteredClient>;
  /** Who approves authorizations from now on. */
  setSubject(sub: string): void;
  /** Approves a pending device authorization by its user code (as GET /device?user_code=… does). */
  approveDevice(userCode: string): boolean;
  /** An access token made directly, recorded in `issued`. */
  issueAccessToken(grant: {
    resource: string;
    sub?: string;
    scope?: string;
    lifetimeSeconds?: number;
  }): Promise<string>;
  close(): Promise<void>;
}

function metadata(state: AsState): Record<string, unknown> {
  const at = (path: string) => `${state.issuer}${path}`;
  const { options } = state;
  return {
    issuer: state.issuer,
    authorization_endpoint: at('/authorize'),
    token_endpoint: at('/token'),
    jwks_uri: at('/jwks'),
    ...(options.registration ? { registration_endpoint: at('/register') } : {}),
    ...(options.revocation
      ? { revocation_endpoint: at('/revoke'), revocation_endpoint_auth_methods_supported: AUTH_METHODS }
      : {}),
    ...(options.deviceGrant ? { device_authorization_endpoint: at('/device_authorization') } : {}),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: grantTypes(state),
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    scopes_supported: options.scopes,
    authorization_response_iss_parameter_supported: true,
  };
}

/** The fields of a request worth recording: never a code, a verifier, a secret or a token. */
const recorded = (params: URLSearchParams): Partial<RecordedRequest> => {
  const out: Partial<RecordedRequest> = {};
  for (const key of ['grant_type', 'client_id', 'resource', 'scope', 'token_type_hint'] as const) {
    const v = params.get(key);
    if (v !== null) out[key] = v;
  }
  return out;
};

/** Routes one request; returns what to record of it besides method, path and status. */
async function route(
  state: AsState,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Partial<RecordedRequest>> {
  const url = new URL(req.url ?? '/', state.issuer);
  const { options } = state;
  const get = req.method === 'GET';
  if (get && url.pathname === '/.well-known/oauth-authorization-server') {
    sendJson(res, 200, metadata(state));
    return {};
  }
  if (get && url.pathname === '/jwks') {
    sendJson(res, 200, { keys: [await publicJwk(state)] });
    return {};
  }
  if (get && url.pathname === '/authorize')
    return { ...recorded(url.searchParams), error: authorize(state, url.searchParams, res) };
  if (get && url.pathname === '/device' && options.deviceGrant) {
    const ok = approveDevice(state, url.searchParams.get('user_code') ?? '');
    res.writeHead(ok ? 200 : 400, { 'content-type': 'text/plain' }).end(ok ? 'approved' : 'unknown code');
    return {};
  }
  if (req.method !== 'POST') return notFound(res);
  const body = await readBody(req);
  if (url.pathname === '/register' && options.registration) {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      json = undefined;
    }
    const out = register(state, json, res);
    return { client_id: out.clientId, error: out.error };
  }
  const endpoints = [
    '/token',
    ...(options.revocation ? ['/revoke'] : []),
    ...(options.deviceGrant ? ['/device_authorization'] : []),
  ];
  if (!endpoints.includes(url.pathname)) return notFound(res);
  const form = new URLSearchParams(body);
  const client = authenticateClient(state, form, req.headers.authorization);
  const fields = { ...recorded(form), ...(client.ok ? { client_id: client.client.clientId } : {}) };
  if (!client.ok) {
    sendError(res, client.status, client.error);
    return { ...fields, error: client.error };
  }
  if (url.pathname === '/token')
    return { ...fields, error: await tokenResponse(state, form, client.client, res) };
  if (url.pathname === '/revoke') {
    revoke(state, form, client.client, res);
    return fields;
  }
  return { ...fields, error: deviceAuthorization(state, form, client.client, res) };
}

function notFound(res: ServerResponse): Partial<RecordedRequest> {
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  return {};
}

async function publicJwk(state: AsState): Promise<Record<string, unknown>> {
  const jwk = await exportJWK(state.key.privateKey);
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
  return { ...pub, kid: state.key.kid, alg: state.options.algorithm, use: 'sig' };
}

function preRegistered(c: PreRegisteredClient): RegisteredClient {
  const secret = c.clientSecret !== undefined;
  return {
    clientId: c.clientId,
    clientSecret: c.clientSecret,
    authMethod: c.authMethod ?? (secret ? 'client_secret_basic' : 'none'),
    redirectUris: c.redirectUris ?? ['http://127.0.0.1/callback'],
    grantTypes: c.grantTypes ?? [
      'authorization_code',
      'refresh_token',
      DEVICE_GRANT,
      ...(secret ? ['client_credentials'] : []),
    ],
    registeredBy: 'pre-registered',
  };
}

/** Starts the server on 127.0.0.1 on an ephemeral port. */
export async function startAuthorizationServer(
  options: AuthorizationServerOptions = {},
): Promise<AuthorizationServer> {
  const algorithm = options.algorithm ?? 'ES256';
  const { privateKey } = await generateKeyPair(algorithm, { extractable: true });
  const state: AsState = {
    issuer: '',
    options: {
      accessTokenLifetimeSeconds: options.accessTokenLifetimeSeconds ?? 3600,
      verifierLeewaySeconds: options.verifierLeewaySeconds ?? 0,
      scopes: options.scopes ?? ['mcp'],
      deviceGrant: options.deviceGrant ?? true,
      registration: options.registration ?? true,
      revocation: options.revocation ?? true,
      algorithm,
    },
    key: { privateKey, kid: randomToken(6) },
    clients: new Map((options.preRegisteredClients ?? []).map((c) => [c.clientId, preRegistered(c)])),
    codes: new Map(),
    refreshTokens: new Map(),
    devices: new Map(),
    issued: [],
    revoked: new Set(),
    subject: options.subject ?? 'user-1',
  };
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    route(state, req, res)
      .catch(() => {
        if (!res.headersSent) sendError(res, 500, 'server_error');
        return {};
      })
      .then(
        (fields) => {
          const clean = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
          requests.push({ method: req.method ?? '', path, status: res.statusCode, ...clean });
        },
        () => undefined,
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer: state.issuer,
    url: `${state.issuer}/.well-known/oauth-authorization-server`,
    jwks: { keys: [(await publicJwk(state)) as JSONWebKeySet['keys'][number]] },
    requests,
    issued: state.issued,
    revoked: state.revoked,
    clients: state.clients,
    setSubject: (sub) => void (state.subject = sub),
    approveDevice: (userCode) => approveDevice(state, userCode),
    async issueAccessToken({ resource, sub, scope, lifetimeSeconds }) {
      const grant = {
        clientId: 'test',
        sub: sub ?? state.subject,
        scope: scope ?? state.options.scopes.join(' '),
        resource,
      };
      const value = await mintAccessToken(state, grant, lifetimeSeconds);
      state.issued.push({ kind: 'access', value, grantType: 'direct', ...grant });
      return value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The flags of `durable-mcp serve` in JWT mode trusting `as`, on a SQLite file in `dir` (its JWKS written there,
 * since `--jwks` takes a file or an https URL).
 */
export function jwtServeArgs(as: AuthorizationServer, dir: string): string[] {
  const jwks = join(dir, 'jwks.json');
  writeFileSync(jwks, JSON.stringify(as.jwks));
  return ['--port', '0', '--store', join(dir, 'tasks.db'), '--jwt-issuer', as.issuer, '--jwks', jwks];
}
