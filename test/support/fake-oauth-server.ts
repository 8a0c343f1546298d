// A fake OAuth-protected MCP server and its authorization server behind a fetch function (no socket): protected-
// resource and authorization-server metadata, dynamic registration, an authorization endpoint that approves at once,
// a token endpoint (codes, refresh, client credentials), revocation, and an MCP endpoint that checks bearer tokens
// and scopes. It records what it was asked, so tests can assert on the requests and on the secrets it issued.
import type { SignInPrompt } from '../../src/client/oauth/types.js';

export const RESOURCE_ORIGIN = 'http://127.0.0.1:9901';
export const SERVER_URL = `${RESOURCE_ORIGIN}/mcp`;
export const ISSUER = 'http://127.0.0.1:9902';

export interface FakeOAuthOptions {
  /** Lifetime of access tokens in seconds (default 3600). */
  expiresIn?: number;
  /** Refresh tokens issued (default true). */
  refreshTokens?: boolean;
  /** The refresh grant answers invalid_grant, its description echoing the refresh token. */
  refuseRefresh?: boolean;
  /** Scopes the MCP endpoint needs per method (default none). */
  required?: Record<string, string[]>;
  scopesSupported?: string[];
  /** Milliseconds each token response waits (to overlap concurrent callers). */
  tokenDelayMs?: number;
  /** The code exchange answers invalid_grant, its description echoing the code and the PKCE verifier. */
  refuseCode?: boolean;
  issuer?: string;
  /** A device authorization endpoint (RFC 8628); its first poll answers authorization_pending. */
  device?: boolean;
}

export interface FakeOAuthServer {
  fetch: typeof fetch;
  prompt: SignInPrompt;
  counts: {
    authorize: number;
    token: number;
    refresh: number;
    register: number;
    revoke: number;
    mcp: number;
  };
  /** The scope of each authorization request, in order. */
  authorizeScopes: (string | null)[];
  /** Every access and refresh token issued, and every code. */
  secrets: string[];
  /** The `resource` parameter of every token request. */
  tokenResources: (string | null)[];
  /** While true, requests to the authorization server fail as an unreachable host's do. */
  down: boolean;
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

export function createFakeOAuthServer(options: FakeOAuthOptions = {}): FakeOAuthServer {
  const issuer = options.issuer ?? ISSUER;
  const granted = new Map<string, string[]>();
  const codes = new Map<string, string[]>();
  const refreshScopes = new Map<string, string[]>();
  let n = 0;
  let devicePolls = 0;
  let deviceScope: string | null = null;
  const server: FakeOAuthServer = {
    fetch: undefined as unknown as typeof fetch,
    prompt: undefined as unknown as SignInPrompt,
    counts: { authorize: 0, token: 0, refresh: 0, register: 0, revoke: 0, mcp: 0 },
    authorizeScopes: [],
    secrets: [],
    tokenResources: [],
    down: false,
  };
  const issue = (scopes: string[]): Record<string, unknown> => {
    n += 1;
    const access = `access-${n}-${Math.random().toString(36).slice(2)}`;
    granted.set(access, scopes);
    server.secrets.push(access);
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: options.expiresIn ?? 3600,
      scope: scopes.join(' '),
    };
    if (options.refreshTokens !== false) {
      const refresh = `refresh-${n}-${Math.random().toString(36).slice(2)}`;
      refreshScopes.set(refresh, scopes);
      server.secrets.push(refresh);
      body.refresh_token = refresh;
    }
    return body;
  };
  const challenge = (status: number, scope: string[], error?: string): Response =>
    json({ error: error ?? 'invalid_token' }, status, {
      'www-authenticate':
        `Bearer resource_metadata="${RESOURCE_ORIGIN}/.well-known/oauth-protected-resource/mcp"` +
        (scope.length > 0 ? `, scope="${scope.join(' ')}"` : '') +
        (error ? `, error="${error}"` : ''),
    });

  async function token(form: URLSearchParams): Promise<Response> {
    server.counts.token += 1;
    server.tokenResources.push(form.get('resource'));
    if (options.tokenDelayMs) await new Promise((r) => setTimeout(r, options.tokenDelayMs));
    const grant = form.get('grant_type');
    if (grant === 'authorization_code') {
      const code = form.get('code') ?? '';
      const verifier = form.get('code_verifier') ?? '';
      server.secrets.push(verifier);
      if (options.refuseCode)
        return json({ error: 'invalid_grant', error_description: `code ${code} / ${verifier} refused` }, 400);
      const scopes = codes.get(code);
      if (scopes === undefined) return json({ error: 'invalid_grant' }, 400);
      return json(issue(scopes));
    }
    if (grant === 'refresh_token') {
      server.counts.refresh += 1;
      const refresh = form.get('refresh_token') ?? '';
      if (options.refuseRefresh)
        return json({ error: 'invalid_grant', error_description: `refresh token ${refresh} expired` }, 400);
      const scopes = refreshScopes.get(refresh);
      return scopes === undefined ? json({ error: 'invalid_grant' }, 400) : json(issue(scopes));
    }
    if (grant === 'urn:ietf:params:oauth:grant-type:device_code') {
      devicePolls += 1;
      if (devicePolls === 1) return json({ error: 'authorization_pending' }, 400);
      return json(issue((deviceScope ?? '').split(' ').filter(Boolean)));
    }
    if (grant === 'client_credentials')
      return json(issue((form.get('scope') ?? '').split(' ').filter(Boolean)));
    return json({ error: 'unsupported_grant_type' }, 400);
  }

  function authorize(url: URL): Response {
    server.counts.authorize += 1;
    const q = url.searchParams;
    server.authorizeScopes.push(q.get('scope'));
    const code = `code-${server.counts.authorize}-${Math.random().toString(36).slice(2)}`;
    server.secrets.push(code);
    codes.set(code, (q.get('scope') ?? '').split(' ').filter(Boolean));
    const back = new URL(q.get('redirect_uri') ?? '');
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    back.searchParams.set('iss', issuer);
    return new Response(null, { status: 302, headers: { location: back.href } });
  }

  function mcp(headers: Headers, body: string): Response {
    server.counts.mcp += 1;
    const { id, method } = JSON.parse(body) as { id: unknown; method: string };
    const need = options.required?.[method] ?? [];
    const bearer = /^Bearer (.+)$/.exec(headers.get('authorization') ?? '')?.[1];
    const scopes = bearer === undefined ? undefined : granted.get(bearer);
    if (scopes === undefined) return challenge(401, need);
    if (!need.every((s) => scopes.includes(s))) return challenge(403, need, 'insufficient_scope');
    return json({ jsonrpc: '2.0', id, result: { resultType: 'complete', ok: true } });
  }

  server.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    const body = typeof init?.body === 'string' ? init.body : init?.body ? String(init.body) : '';
    const at = `${url.origin}${url.pathname}`;
    if (server.down && url.origin === new URL(issuer).origin) throw new TypeError('fetch failed');
    if (at === `${RESOURCE_ORIGIN}/.well-known/oauth-protected-resource/mcp`)
      return json({
        resource: SERVER_URL,
        authorization_servers: [issuer],
        ...(options.scopesSupported ? { scopes_supported: options.scopesSupported } : {}),
      });
    if (at === `${new URL(issuer).origin}/.well-known/oauth-authorization-server`)
      return json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        revocation_endpoint: `${issuer}/revoke`,
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
        authorization_response_iss_parameter_supported: true,
        ...(options.device ? { device_authorization_endpoint: `${issuer}/device` } : {}),
      });
    if (at === `${issuer}/device`) {
      deviceScope = new URLSearchParams(body).get('scope');
      return json({
        device_code: 'device-code-secret',
        user_code: 'ABCD-EFGH',
        verification_uri: `${issuer}/activate`,
        expires_in: 30,
        interval: 1,
      });
    }
    if (at === `${issuer}/register`) {
      server.counts.register += 1;
      return json({ client_id: `client-${server.counts.register}` }, 201);
    }
    if (at === `${issuer}/authorize`) return authorize(url);
    if (at === `${issuer}/token`) return token(new URLSearchParams(body));
    if (at === `${issuer}/revoke`) {
      server.counts.revoke += 1;
      return new Response(null, { status: 200 });
    }
    if (at === SERVER_URL) return mcp(headers, body);
    if (at.startsWith(`${RESOURCE_ORIGIN}/tasks/`)) {
      const bearer = /^Bearer (.+)$/.exec(headers.get('authorization') ?? '')?.[1];
      return bearer !== undefined && granted.has(bearer)
        ? json({ outcome: 'delivered' })
        : challenge(401, []);
    }
    return json({ error: 'not_found' }, 404);
  };
  server.prompt = {
    redirectUri: 'http://127.0.0.1:9903/callback',
    async authorize({ url }) {
      const res = await server.fetch(url);
      return new URL(res.headers.get('location') ?? '');
    },
  };
  return server;
}
