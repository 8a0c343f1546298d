// `durable-mcp gateway`'s own OAuth credentials for an HTTP upstream: the client credentials grant of a client
// registered with the upstream's authorization server (--upstream-client-id, its secret from an environment variable
// so that it stays off the command line), or the gateway's stored sign-in (--upstream-sign-in, made beforehand with
// `durable-mcp login --url <upstream>`), refreshed as it goes and never prompting.
import { createFileTokenStore, createMemoryTokenStore, createOAuth } from '../client/oauth/index.js';
import {
  OAuthFlowError,
  SignInRequiredError,
  type ClientAuth,
  type OAuthOptions,
} from '../client/oauth/types.js';
import { signInFailure } from '../gateway/upstream.js';
import { UsageError } from './args.js';
import { tokenFilePath } from './token-file.js';

export const UPSTREAM_AUTH_FLAGS = {
  'upstream-client-id': { type: 'string' },
  'upstream-client-secret-env': { type: 'string' },
  'upstream-sign-in': { type: 'boolean' },
} as const;

export const upstreamAuthUsage = `  --upstream-client-id ID --upstream-client-secret-env VAR  OAuth client credentials for an HTTP upstream: its
                         tokens come from the client credentials grant of its authorization server, asked again as
                         they expire (the secret read from the environment variable VAR, never from the command line)
  --upstream-sign-in     the gateway's own stored sign-in for an HTTP upstream, made beforehand with
                         "durable-mcp login --url <upstream>" into the token file ($DURABLE_MCP_TOKEN_FILE, else
                         $XDG_CONFIG_HOME/durable-mcp/tokens.json, else ~/.config/durable-mcp/tokens.json),
                         refreshed as it goes (the refreshed tokens written back); nobody is asked to sign in`;

/** How the gateway signs in to its upstream. */
export type UpstreamAuthSetting =
  | { kind: 'client-credentials'; clientId: string; clientSecret: string }
  | { kind: 'sign-in'; tokenFile: string };

type Values = Record<string, string | boolean | undefined>;

/** The other ways of giving the upstream's credentials, which these do not go with. */
const STATIC_FLAGS = ['upstream-token-env', 'upstream-token-file', 'upstream-tenant-tokens'] as const;

/** The sign-in the flags ask for (undefined: none); usage errors for what cannot be. */
export function upstreamAuthSetting(
  values: Values,
  env: Readonly<Record<string, string | undefined>> = process.env,
): UpstreamAuthSetting | undefined {
  const clientId = values['upstream-client-id'];
  const secretEnv = values['upstream-client-secret-env'];
  const signIn = values['upstream-sign-in'] === true;
  if (clientId === undefined && secretEnv === undefined && !signIn) return undefined;
  if (signIn && (clientId !== undefined || secretEnv !== undefined))
    throw new UsageError('give --upstream-sign-in or --upstream-client-id, not both');
  const named = signIn ? '--upstream-sign-in' : '--upstream-client-id';
  for (const flag of STATIC_FLAGS)
    if (values[flag] !== undefined)
      throw new UsageError(`give ${named} or --${flag}, not both: each gives the upstream's credentials`);
  if (typeof values.upstream === 'string' && values.upstream.startsWith('stdio:'))
    throw new UsageError(`${named} is for an HTTP upstream, not a stdio one`);
  if (signIn) return { kind: 'sign-in', tokenFile: tokenFilePath(env) };
  if (typeof clientId !== 'string' || clientId.trim() === '')
    throw new UsageError('--upstream-client-secret-env goes with --upstream-client-id ID');
  if (typeof secretEnv !== 'string' || secretEnv === '')
    throw new UsageError(
      '--upstream-client-id needs --upstream-client-secret-env VAR: the environment variable holding its secret',
    );
  const clientSecret = env[secretEnv];
  if (clientSecret === undefined || clientSecret === '')
    throw new UsageError(`--upstream-client-secret-env: ${secretEnv} is not set`);
  return { kind: 'client-credentials', clientId: clientId.trim(), clientSecret };
}

/** The sign-in to `serverUrl` the setting describes: what the upstream connection sends its requests with. */
export function createUpstreamAuth(
  setting: UpstreamAuthSetting,
  serverUrl: string,
  extra: Pick<OAuthOptions, 'fetch' | 'now' | 'refreshSkewMs'> = {},
): ClientAuth {
  if (setting.kind === 'client-credentials')
    return createOAuth({
      ...extra,
      serverUrl,
      store: createMemoryTokenStore(),
      client: { clientId: setting.clientId, clientSecret: setting.clientSecret },
      clientCredentials: true,
    });
  // No prompt: a sign-in that is needed fails with SignInRequiredError instead of asking anyone.
  return createOAuth({ ...extra, serverUrl, store: createFileTokenStore(setting.tokenFile) });
}

/**
 * The error the gateway stops with when its stored sign-in could not be used to read the upstream's tools at start
 * (none for the upstream in the token file, or one the authorization server no longer refreshes): what to run, and
 * where the sign-in is looked for. Undefined for any other failure.
 */
export function unusableSignIn(
  err: unknown,
  setting: UpstreamAuthSetting | undefined,
  upstream: string,
): SignInRequiredError | undefined {
  const failure = signInFailure(err);
  if (setting?.kind !== 'sign-in' || failure === undefined) return undefined;
  const why = failure instanceof OAuthFlowError ? ` (${failure.message})` : '';
  return new SignInRequiredError(
    upstream,
    `--upstream ${upstream}: the gateway has no usable sign-in for it in ${setting.tokenFile}${why}: run ` +
      `"durable-mcp login --url ${upstream}" with the same token file, then start the gateway again`,
  );
}
