// The contract of signing in to an OAuth-protected MCP server: what the HTTP transport asks of a sign-in, what a
// token store keeps, and how a person is asked to approve.

/** What the HTTP transport asks of a sign-in on every request. */
export interface ClientAuth {
  /** The access token to send (refreshed first when it is about to expire), or undefined to send none. */
  token(signal?: AbortSignal): Promise<string | undefined>;
  /**
   * Called with a 401, or a 403 whose `WWW-Authenticate` challenge says `insufficient_scope`. Resolves true when a new
   * token was obtained and the request should be sent again, false when it should not (the response then stands).
   * Rejects with {@link SignInRequiredError} when a person must sign in and there is no way to ask one.
   */
  challenge(response: Response, signal?: AbortSignal): Promise<boolean>;
}

/** Tokens from a token endpoint. `expiresAt` is milliseconds since the epoch. */
export interface OAuthTokenSet {
  accessToken: string;
  tokenType: string;
  refreshToken?: string;
  expiresAt?: number;
  /** The scopes granted (space-separated), as the token endpoint said or as requested. */
  scope?: string;
}

export type TokenEndpointAuthMethod =
  'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';

/** How this client is known to an authorization server. */
export interface OAuthClientInfo {
  clientId: string;
  clientSecret?: string;
  authMethod: TokenEndpointAuthMethod;
  /** How the client id came about. */
  registeredBy: 'dynamic' | 'metadata-document' | 'pre-registered';
  /** The redirect URIs it was registered with (dynamic registration only). */
  redirectUris?: string[];
}

/** One sign-in: the tokens of one protected resource, from one authorization server. */
export interface SignInRecord {
  /** The protected resource (RFC 9728 `resource`, else the server URL without fragment). */
  resource: string;
  /** The authorization server's issuer identifier. */
  issuer: string;
  client: OAuthClientInfo;
  tokens?: OAuthTokenSet;
  updatedAt: string;
}

/** Where sign-ins are kept: one record per resource; a record from another issuer is replaced. */
export interface TokenStore {
  get(resource: string): Promise<SignInRecord | undefined>;
  set(record: SignInRecord): Promise<void>;
  delete(resource: string): Promise<void>;
  list(): Promise<SignInRecord[]>;
}

/** An authorization request a person must approve in a browser. */
export interface AuthorizationRequest {
  /** The authorization endpoint URL with every parameter; to be opened or shown, never logged elsewhere. */
  url: URL;
  redirectUri: string;
  signal?: AbortSignal;
}

/** A device authorization (RFC 8628): the person opens `verificationUri` on any device and enters `userCode`. */
export interface DeviceAuthorizationPrompt {
  verificationUri: string;
  verificationUriComplete?: string;
  userCode: string;
  expiresInSeconds: number;
}

/** How a person approves a sign-in; without one, a needed sign-in fails with {@link SignInRequiredError}. */
export interface SignInPrompt {
  /** The loopback redirect URI the authorization code comes back to (e.g. `http://127.0.0.1:PORT/callback`). */
  redirectUri: string;
  /** Shows the person the URL (opens a browser or prints it) and resolves with the URL the browser was sent back to. */
  authorize(request: AuthorizationRequest): Promise<URL>;
  /** When set and the authorization server offers it, the device authorization grant is used instead. */
  device?: (prompt: DeviceAuthorizationPrompt) => void | Promise<void>;
}

/** A sign-in is needed and nobody can be asked (no prompt, or no terminal). */
export class SignInRequiredError extends Error {
  override readonly name = 'SignInRequiredError';
  constructor(
    readonly resource: string,
    message = `sign-in needed for ${resource}: run "durable-mcp login --url ${resource}"`,
  ) {
    super(message);
  }
}

/**
 * An authorization server or protected resource answered something the sign-in cannot go on with (an OAuth error, a
 * metadata mismatch, a wrong `iss`). Its message never holds a token or a code.
 */
export class OAuthFlowError extends Error {
  override readonly name = 'OAuthFlowError';
  constructor(
    message: string,
    /** The OAuth `error` code when the server sent one (`invalid_grant`, …). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** Client credentials for a machine client: the client credentials grant, signed with a key or a secret. */
export interface ClientCredentialsOptions {
  /** For `private_key_jwt`: the private key (PKCS#8 PEM or a private JWK) and its algorithm (default ES256). */
  privateKey?: string | Record<string, unknown>;
  algorithm?: string;
  keyId?: string;
}

export interface OAuthOptions {
  /** The MCP server endpoint. */
  serverUrl: string;
  /** Where sign-ins are kept (default: in memory). */
  store?: TokenStore;
  /** The `client_name` for dynamic registration. */
  clientName?: string;
  /** A client registered beforehand, used instead of registering. */
  client?: { clientId: string; clientSecret?: string; authMethod?: TokenEndpointAuthMethod };
  /** HTTPS URL of this client's metadata document, used as its client id where the server supports that. */
  clientMetadataUrl?: string;
  /** Scopes to ask for (default: the challenge's, else the resource's `scopes_supported`, else none). */
  scope?: string;
  /** How a person approves; without it a needed sign-in fails with {@link SignInRequiredError}. */
  prompt?: SignInPrompt;
  /** A machine client: tokens come from the client credentials grant of `client`, nobody is asked. */
  clientCredentials?: boolean | ClientCredentialsOptions;
  fetch?: typeof fetch;
  /** Refresh this long before a token expires (default 60 000 ms). */
  refreshSkewMs?: number;
  now?: () => number;
}

/** A sign-in to one MCP server: the transport's {@link ClientAuth}, plus signing in and out on purpose. */
export interface OAuthSession extends ClientAuth {
  /** Signs in now (discovery, registration, authorization, token), whether or not a token is kept. */
  signIn(options?: { scope?: string; signal?: AbortSignal }): Promise<SignInRecord>;
  /** Forgets the sign-in, revoking its tokens first where the authorization server supports revocation. */
  signOut(signal?: AbortSignal): Promise<{ removed: boolean; revoked: boolean }>;
  /** The kept sign-in of this server, if any. */
  record(): Promise<SignInRecord | undefined>;
}
