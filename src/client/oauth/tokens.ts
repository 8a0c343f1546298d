// Requests to the token and revocation endpoints: the authorization code exchange, refresh, the client credentials
// grant, revocation (RFC 7009); each with the client's authentication method and the `resource` parameter.
import * as oauth from 'oauth4webapi';
import { oauthOptions, type HttpContext } from './http.js';
import { toFlowError } from './oauth-errors.js';
import type { OAuthClientInfo, OAuthTokenSet } from './types.js';

/** `value` form-urlencoded (RFC 6749 §2.3.1), leaving `*-._` as they are, as the WHATWG encoder does. */
const formEncode = (value: string): string => new URLSearchParams([['', value]]).toString().slice(1);

/**
 * client_secret_basic. oauth4webapi's own also escapes `-`, `_`, `.` and `~`, which servers that do not decode the
 * credentials (several do not) then refuse.
 */
function clientSecretBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${formEncode(client.client_id)}:${formEncode(secret)}`;
    headers.set('authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
  };
}

/** How the client authenticates (the private key only for private_key_jwt). */
export function clientAuthOf(client: OAuthClientInfo, privateKey?: oauth.PrivateKey): oauth.ClientAuth {
  switch (client.authMethod) {
    case 'client_secret_basic':
      return clientSecretBasic(client.clientSecret ?? '');
    case 'client_secret_post':
      return oauth.ClientSecretPost(client.clientSecret ?? '');
    case 'private_key_jwt':
      if (privateKey === undefined) throw new Error('private_key_jwt needs the client private key');
      return oauth.PrivateKeyJwt(privateKey);
    default:
      return oauth.None();
  }
}

/** oauth4webapi's view of the client. */
export function toOauthClient(client: OAuthClientInfo): oauth.Client {
  return { client_id: client.clientId, token_endpoint_auth_method: client.authMethod };
}

/** The tokens of a token endpoint response; a refresh token kept from before when none came. */
export function toTokenSet(
  res: oauth.TokenEndpointResponse,
  now: number,
  requestedScope: string | undefined,
  previous?: OAuthTokenSet,
): OAuthTokenSet {
  const tokens: OAuthTokenSet = { accessToken: res.access_token, tokenType: res.token_type };
  const refresh = res.refresh_token ?? previous?.refreshToken;
  if (refresh !== undefined) tokens.refreshToken = refresh;
  if (typeof res.expires_in === 'number') tokens.expiresAt = now + res.expires_in * 1000;
  const scope = res.scope ?? requestedScope ?? previous?.scope;
  if (scope !== undefined) tokens.scope = scope;
  return tokens;
}

/** What every token request needs. */
export interface TokenRequestContext {
  http: HttpContext;
  as: oauth.AuthorizationServer;
  client: OAuthClientInfo;
  resource: string;
  privateKey?: oauth.PrivateKey;
  now: () => number;
}

function requestOptions(
  ctx: TokenRequestContext,
  extra: Record<string, string>,
): oauth.TokenEndpointRequestOptions {
  return {
    ...oauthOptions(ctx.http, ctx.as.token_endpoint),
    additionalParameters: { resource: ctx.resource, ...extra },
  };
}

/** Exchanges an authorization code (with its PKCE verifier) for tokens. */
export async function exchangeCode(
  ctx: TokenRequestContext,
  callback: URLSearchParams,
  redirectUri: string,
  verifier: string,
  scope: string | undefined,
): Promise<OAuthTokenSet> {
  const client = toOauthClient(ctx.client);
  try {
    const res = await oauth.authorizationCodeGrantRequest(
      ctx.as,
      client,
      clientAuthOf(ctx.client, ctx.privateKey),
      callback,
      redirectUri,
      verifier,
      requestOptions(ctx, {}),
    );
    const body = await oauth.processAuthorizationCodeResponse(ctx.as, client, res);
    return toTokenSet(body, ctx.now(), scope);
  } catch (err) {
    throw toFlowError('the token request failed', err, [
      callback.get('code') ?? undefined,
      verifier,
      ctx.client.clientSecret,
    ]);
  }
}

/** New tokens from a refresh token (the refresh token kept when the server sends no new one). */
export async function refreshTokens(
  ctx: TokenRequestContext,
  previous: OAuthTokenSet,
): Promise<OAuthTokenSet> {
  const refreshToken = previous.refreshToken;
  if (refreshToken === undefined) throw new Error('no refresh token');
  const client = toOauthClient(ctx.client);
  try {
    const res = await oauth.refreshTokenGrantRequest(
      ctx.as,
      client,
      clientAuthOf(ctx.client, ctx.privateKey),
      refreshToken,
      requestOptions(ctx, {}),
    );
    const body = await oauth.processRefreshTokenResponse(ctx.as, client, res);
    return toTokenSet(body, ctx.now(), undefined, previous);
  } catch (err) {
    throw toFlowError('the token refresh failed', err, [
      refreshToken,
      previous.accessToken,
      ctx.client.clientSecret,
    ]);
  }
}

/** Tokens for the client itself (client credentials grant). */
export async function clientCredentialsTokens(
  ctx: TokenRequestContext,
  scope: string | undefined,
): Promise<OAuthTokenSet> {
  const client = toOauthClient(ctx.client);
  const parameters: Record<string, string> = { resource: ctx.resource };
  if (scope !== undefined) parameters.scope = scope;
  try {
    const res = await oauth.clientCredentialsGrantRequest(
      ctx.as,
      client,
      clientAuthOf(ctx.client, ctx.privateKey),
      parameters,
      oauthOptions(ctx.http, ctx.as.token_endpoint),
    );
    const body = await oauth.processClientCredentialsResponse(ctx.as, client, res);
    return toTokenSet(body, ctx.now(), scope);
  } catch (err) {
    throw toFlowError('the client credentials grant failed', err, [ctx.client.clientSecret]);
  }
}

/** Revokes the tokens (refresh token first) where the server has a revocation endpoint; true when it took them. */
export async function revokeTokens(ctx: TokenRequestContext, tokens: OAuthTokenSet): Promise<boolean> {
  if (ctx.as.revocation_endpoint === undefined) return false;
  const client = toOauthClient(ctx.client);
  const auth = clientAuthOf(ctx.client, ctx.privateKey);
  const opts = oauthOptions(ctx.http, ctx.as.revocation_endpoint);
  try {
    for (const [token, hint] of [
      [tokens.refreshToken, 'refresh_token'],
      [tokens.accessToken, 'access_token'],
    ] as const) {
      if (token === undefined) continue;
      const res = await oauth.revocationRequest(ctx.as, client, auth, token, {
        ...opts,
        additionalParameters: { token_type_hint: hint },
      });
      await oauth.processRevocationResponse(res);
    }
    return true;
  } catch {
    return false;
  }
}
