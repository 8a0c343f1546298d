// How this client becomes known to an authorization server: a client registered beforehand, else its client ID
// metadata document URL where the server accepts one, else dynamic registration (RFC 7591) as a native application;
// and which token endpoint authentication method it then uses.
import * as oauth from 'oauth4webapi';
import { oauthOptions, type HttpContext } from './http.js';
import { toFlowError } from './oauth-errors.js';
import {
  OAuthFlowError,
  type OAuthClientInfo,
  type OAuthOptions,
  type TokenEndpointAuthMethod,
} from './types.js';

const KNOWN_METHODS: TokenEndpointAuthMethod[] = [
  'none',
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
];
const SECRET_METHODS: TokenEndpointAuthMethod[] = ['client_secret_basic', 'client_secret_post'];

/** The methods the server accepts (RFC 8414: client_secret_basic when it does not say). */
function supportedMethods(as: oauth.AuthorizationServer): string[] {
  return as.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
}

/** The method for a client with or without a secret, given what the server accepts. */
export function chooseAuthMethod(
  as: oauth.AuthorizationServer,
  hasSecret: boolean,
  preferred?: TokenEndpointAuthMethod,
): TokenEndpointAuthMethod {
  if (preferred !== undefined) return preferred;
  const supported = supportedMethods(as);
  if (!hasSecret) return 'none';
  return SECRET_METHODS.find((m) => supported.includes(m)) ?? 'client_secret_basic';
}

function preRegistered(
  as: oauth.AuthorizationServer,
  client: NonNullable<OAuthOptions['client']>,
  privateKey: boolean,
): OAuthClientInfo {
  const authMethod = privateKey
    ? 'private_key_jwt'
    : chooseAuthMethod(as, client.clientSecret !== undefined, client.authMethod);
  return {
    clientId: client.clientId,
    ...(client.clientSecret === undefined ? {} : { clientSecret: client.clientSecret }),
    authMethod,
    registeredBy: 'pre-registered',
  };
}

/** The method to ask for at registration: none (a public native client) where accepted, else a secret method. */
function registrationMethod(as: oauth.AuthorizationServer): TokenEndpointAuthMethod {
  const supported = supportedMethods(as);
  if (supported.includes('none')) return 'none';
  return SECRET_METHODS.find((m) => supported.includes(m)) ?? 'client_secret_basic';
}

async function registerDynamically(
  http: HttpContext,
  as: oauth.AuthorizationServer,
  options: OAuthOptions,
  redirectUri: string,
): Promise<OAuthClientInfo> {
  const requested = registrationMethod(as);
  const metadata = {
    client_name: options.clientName ?? 'durable-mcp',
    application_type: 'native',
    redirect_uris: [redirectUri],
    grant_types: [
      'authorization_code',
      'refresh_token',
      ...(options.prompt?.device !== undefined && as.device_authorization_endpoint !== undefined
        ? ['urn:ietf:params:oauth:grant-type:device_code']
        : []),
    ],
    response_types: ['code'],
    token_endpoint_auth_method: requested,
  };
  let registered: Record<string, unknown>;
  try {
    const res = await oauth.dynamicClientRegistrationRequest(
      as,
      metadata,
      oauthOptions(http, as.registration_endpoint),
    );
    // Read here rather than by oauth4webapi, which also wants `client_secret_expires_at` that servers often leave out.
    if (res.status !== 201 && res.status !== 200) await oauth.processDynamicClientRegistrationResponse(res);
    registered = (await res.json()) as Record<string, unknown>;
  } catch (err) {
    throw toFlowError('client registration failed', err);
  }
  if (typeof registered.client_id !== 'string' || registered.client_id === '')
    throw new OAuthFlowError('client registration failed (no client_id in the answer)');
  const secret = typeof registered.client_secret === 'string' ? registered.client_secret : undefined;
  const said = KNOWN_METHODS.find((m) => m === registered.token_endpoint_auth_method);
  const authMethod = said ?? (requested === 'none' ? 'none' : chooseAuthMethod(as, secret !== undefined));
  return {
    clientId: registered.client_id,
    ...(secret === undefined ? {} : { clientSecret: secret }),
    authMethod,
    registeredBy: 'dynamic',
    redirectUris: [redirectUri],
  };
}

/**
 * How this client is known to `as`: the pre-registered `client` > the client ID metadata document (when the server
 * supports it) > dynamic registration with `redirectUri`.
 */
export async function obtainClient(
  http: HttpContext,
  as: oauth.AuthorizationServer,
  options: OAuthOptions,
  redirectUri: string | undefined,
): Promise<OAuthClientInfo> {
  const privateKey =
    typeof options.clientCredentials === 'object' && options.clientCredentials.privateKey !== undefined;
  if (options.client !== undefined) return preRegistered(as, options.client, privateKey);
  if (options.clientMetadataUrl !== undefined && as.client_id_metadata_document_supported === true)
    return { clientId: options.clientMetadataUrl, authMethod: 'none', registeredBy: 'metadata-document' };
  if (as.registration_endpoint === undefined)
    throw new OAuthFlowError(
      `the authorization server ${as.issuer} offers no client registration: give a pre-registered client id`,
    );
  if (redirectUri === undefined)
    throw new OAuthFlowError('dynamic client registration needs a redirect URI (a sign-in prompt)');
  return registerDynamically(http, as, options, redirectUri);
}
