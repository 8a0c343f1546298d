// The authorization code flow with PKCE (S256): the authorization URL a person approves, the redirect back checked
// (state, and `iss` per RFC 9207), then the code exchanged for tokens.
import * as oauth from 'oauth4webapi';
import { assertSecureUrl } from './http.js';
import { toFlowError } from './oauth-errors.js';
import { exchangeCode, toOauthClient, type TokenRequestContext } from './tokens.js';
import { OAuthFlowError, type OAuthTokenSet, type SignInPrompt } from './types.js';

/** Refuses an authorization server that does not offer PKCE with S256. */
export function assertPkceS256(as: oauth.AuthorizationServer): void {
  if (!as.code_challenge_methods_supported?.includes('S256'))
    throw new OAuthFlowError(
      `the authorization server ${as.issuer} does not offer PKCE with S256: refusing to sign in`,
    );
}

/** The authorization URL with every parameter. */
export function authorizationUrl(
  ctx: TokenRequestContext,
  params: { redirectUri: string; scope?: string; state: string; challenge: string },
): URL {
  if (ctx.as.authorization_endpoint === undefined)
    throw new OAuthFlowError(`the authorization server ${ctx.as.issuer} has no authorization endpoint`);
  const url = new URL(assertSecureUrl(ctx.as.authorization_endpoint, 'the authorization endpoint').href);
  const q = url.searchParams;
  q.set('response_type', 'code');
  q.set('client_id', ctx.client.clientId);
  q.set('redirect_uri', params.redirectUri);
  q.set('state', params.state);
  q.set('code_challenge', params.challenge);
  q.set('code_challenge_method', 'S256');
  q.set('resource', ctx.resource);
  if (params.scope !== undefined) q.set('scope', params.scope);
  return url;
}

/** Asks a person (through `prompt`) to approve, then exchanges the code: the tokens. */
export async function authorizeWithCode(
  ctx: TokenRequestContext,
  prompt: SignInPrompt,
  scope: string | undefined,
): Promise<OAuthTokenSet> {
  assertPkceS256(ctx.as);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const redirectUri = prompt.redirectUri;
  const url = authorizationUrl(ctx, {
    redirectUri,
    state,
    challenge,
    ...(scope === undefined ? {} : { scope }),
  });
  const back = await prompt.authorize({
    url,
    redirectUri,
    ...(ctx.http.signal ? { signal: ctx.http.signal } : {}),
  });
  let callback: URLSearchParams;
  try {
    callback = oauth.validateAuthResponse(ctx.as, toOauthClient(ctx.client), back, state);
  } catch (err) {
    throw toFlowError('the authorization response was refused', err, [
      back.searchParams.get('code') ?? undefined,
    ]);
  }
  return exchangeCode(ctx, callback, redirectUri, verifier, scope);
}
