// Signing in to the test authorization server with plain fetch, as a minimal public client would: dynamic
// registration, the authorization endpoint with PKCE (its redirect read, not followed), then the token endpoint.
import { createHash, randomBytes } from 'node:crypto';

export interface DirectTokens {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
  token_type: string;
  clientId: string;
}

const REDIRECT_URI = 'http://127.0.0.1:9/callback';

async function json(res: Response, what: string): Promise<Record<string, unknown>> {
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${what}: ${res.status} ${String(body.error)}`);
  return body;
}

/** Registers a public client and runs the authorization code flow for `resource`; throws on any refusal. */
export async function signInDirectly(
  issuer: string,
  resource: string,
  scope?: string,
): Promise<DirectTokens> {
  const meta = await json(await fetch(`${issuer}/.well-known/oauth-authorization-server`), 'metadata');
  const registered = await json(
    await fetch(String(meta.registration_endpoint), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        client_name: 'test',
      }),
    }),
    'registration',
  );
  const clientId = String(registered.client_id);
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(8).toString('hex');
  const authorize = new URL(String(meta.authorization_endpoint));
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state,
    resource,
    ...(scope === undefined ? {} : { scope }),
  };
  for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v);
  const redirect = await fetch(authorize, { redirect: 'manual' });
  const back = new URL(redirect.headers.get('location') ?? 'about:blank');
  if (
    redirect.status !== 302 ||
    back.searchParams.get('state') !== state ||
    back.searchParams.get('iss') !== issuer
  )
    throw new Error(`authorization: ${redirect.status} ${back.searchParams.get('error') ?? ''}`);
  const tokens = await json(
    await fetch(String(meta.token_endpoint), {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: back.searchParams.get('code') ?? '',
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        client_id: clientId,
        resource,
      }),
    }),
    'token',
  );
  return { ...(tokens as unknown as Omit<DirectTokens, 'clientId'>), clientId };
}

/** A refresh token grant for a public client; resolves with the token endpoint's status and body. */
export async function refreshDirectly(
  issuer: string,
  clientId: string,
  refreshToken: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${issuer}/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
