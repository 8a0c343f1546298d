// The state of the test authorization server (clients, codes, grants, issued tokens) and the HTTP helpers its
// endpoints share: bodies, JSON answers, OAuth errors and client authentication.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CryptoKey } from 'jose';

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

export interface RegisteredClient {
  clientId: string;
  clientSecret?: string;
  authMethod: ClientAuthMethod;
  /** Exact URIs; a loopback IP URI matches on any port (RFC 8252 §7.3). */
  redirectUris: string[];
  grantTypes: string[];
  registeredBy: 'dynamic' | 'pre-registered';
}

/** What an authorization was for: carried from the code to its tokens and along every refresh. */
export interface Grant {
  clientId: string;
  sub: string;
  scope: string;
  resource?: string;
}

export interface AuthorizationCode extends Grant {
  redirectUri: string;
  codeChallenge: string;
  expiresAt: number;
}

export interface DeviceAuthorization extends Grant {
  userCode: string;
  expiresAt: number;
  approved: boolean;
  /** True once its tokens were issued: a device code is good for one token response. */
  used: boolean;
}

/** A token the server handed out, kept so tests can look for it where it must not be. */
export interface IssuedToken {
  kind: 'access' | 'refresh';
  value: string;
  grantType: string;
  clientId: string;
  sub: string;
  scope: string;
  resource?: string;
}

/** One request as the server saw it, without codes, verifiers, secrets or tokens. */
export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
  grant_type?: string;
  client_id?: string;
  resource?: string;
  scope?: string;
  token_type_hint?: string;
  /** The OAuth `error` of the answer, if it was one. */
  error?: string;
}

export interface ResolvedOptions {
  accessTokenLifetimeSeconds: number;
  verifierLeewaySeconds: number;
  scopes: string[];
  deviceGrant: boolean;
  registration: boolean;
  revocation: boolean;
  algorithm: 'ES256' | 'RS256';
}

export interface AsState {
  issuer: string;
  options: ResolvedOptions;
  key: { privateKey: CryptoKey; kid: string };
  clients: Map<string, RegisteredClient>;
  codes: Map<string, AuthorizationCode>;
  /** Live refresh tokens; a used one is removed (rotation), a revoked one too. */
  refreshTokens: Map<string, Grant>;
  devices: Map<string, DeviceAuthorization>;
  issued: IssuedToken[];
  revoked: Set<string>;
  subject: string;
}

export const randomToken = (bytes = 24): string => randomBytes(bytes).toString('base64url');

/** Reads a request body of at most 64 KiB. */
export async function readBody(req: IncomingMessage): Promise<string> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 65_536) throw new Error('body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** An OAuth error answer (RFC 6749 §5.2); `invalid_client` with Basic auth gets its challenge. */
export function sendError(res: ServerResponse, status: number, error: string, description?: string): void {
  if (status === 401) res.setHeader('www-authenticate', 'Basic realm="test authorization server"');
  sendJson(res, status, { error, ...(description === undefined ? {} : { error_description: description }) });
}

export type ClientCheck =
  { ok: true; client: RegisteredClient } | { ok: false; status: number; error: string };

/** RFC 6749 §2.3.1 Basic credentials: each part form-urlencoded, then joined with ':'. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const m = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (m === null) return undefined;
  const text = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const at = text.indexOf(':');
  if (at < 0) return undefined;
  const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  return { id: decode(text.slice(0, at)), secret: decode(text.slice(at + 1)) };
}

/** Authenticates the client of a token, revocation or device request by the method it registered. */
export function authenticateClient(
  state: AsState,
  form: URLSearchParams,
  authorization?: string,
): ClientCheck {
  const basic = basicCredentials(authorization);
  const clientId = basic?.id ?? form.get('client_id') ?? undefined;
  const client = clientId === undefined ? undefined : state.clients.get(clientId);
  const refused: ClientCheck = { ok: false, status: 401, error: 'invalid_client' };
  if (client === undefined) return refused;
  if (basic !== undefined && form.get('client_id') !== null && form.get('client_id') !== basic.id)
    return refused;
  switch (client.authMethod) {
    case 'none':
      return basic === undefined ? { ok: true, client } : refused;
    case 'client_secret_basic':
      return basic?.secret === client.clientSecret ? { ok: true, client } : refused;
    case 'client_secret_post':
      return basic === undefined && form.get('client_secret') === client.clientSecret
        ? { ok: true, client }
        : refused;
  }
}

/** RFC 8252 §7.3: a loopback IP redirect URI matches a registered one on any port. */
export function redirectUriRegistered(client: RegisteredClient, uri: string): boolean {
  if (client.redirectUris.includes(uri)) return true;
  let asked: URL;
  try {
    asked = new URL(uri);
  } catch {
    return false;
  }
  if (asked.protocol !== 'http:' || !['127.0.0.1', '[::1]'].includes(asked.hostname)) return false;
  return client.redirectUris.some((registered) => {
    const r = new URL(registered);
    return (
      r.protocol === 'http:' &&
      r.hostname === asked.hostname &&
      r.pathname === asked.pathname &&
      r.search === asked.search
    );
  });
}

/** The scopes granted for a request: all asked for must be known; none asked gives every known scope. */
export function grantedScope(state: AsState, asked: string | null): string | undefined {
  if (asked === null || asked.trim() === '') return state.options.scopes.join(' ');
  const wanted = asked.split(' ').filter(Boolean);
  return wanted.every((s) => state.options.scopes.includes(s)) ? wanted.join(' ') : undefined;
}
