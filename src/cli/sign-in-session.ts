// The CLI's sign-in to one server: the OAuth session over the token file, asking on the terminal when it may, and the
// flags of `durable-mcp login`.
import { createFileTokenStore, createOAuth } from '../client/oauth/index.js';
import type { ClientAuth, OAuthSession, SignInRecord } from '../client/oauth/types.js';
import {
  createTerminalSignInPrompt,
  promptOptionsFromFlags,
  type TerminalSignInPrompt,
} from './sign-in-prompt.js';
import { tokenFilePath } from './token-file.js';

export const SIGN_IN_FLAGS = {
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  scope: { type: 'string' },
  'no-browser': { type: 'boolean' },
  device: { type: 'boolean' },
  paste: { type: 'boolean' },
} as const;

/** The `client_name` this CLI registers under. */
const CLIENT_NAME = 'durable-mcp CLI';

export interface SignInSession {
  session: OAuthSession;
  /** Undefined when nobody can be asked (no terminal): a needed sign-in then fails with SignInRequiredError. */
  prompt: TerminalSignInPrompt | undefined;
  tokenFile: string;
}

/**
 * The session of `url` over the token file. `--client-id` (with `--client-secret` or `$DURABLE_MCP_CLIENT_SECRET`)
 * names a pre-registered client; without it the server's dynamic registration is used, or the client kept from an
 * earlier sign-in.
 */
export function signInSession(url: string, values: Record<string, unknown>, ask: boolean): SignInSession {
  const tokenFile = tokenFilePath();
  const clientId = values['client-id'] as string | undefined;
  const clientSecret =
    (values['client-secret'] as string | undefined) ?? process.env.DURABLE_MCP_CLIENT_SECRET;
  const prompt = ask ? createTerminalSignInPrompt(promptOptionsFromFlags(values)) : undefined;
  const session = createOAuth({
    serverUrl: url,
    store: createFileTokenStore(tokenFile),
    clientName: CLIENT_NAME,
    ...(clientId === undefined ? {} : { client: { clientId, ...(clientSecret ? { clientSecret } : {}) } }),
    ...(typeof values.scope === 'string' ? { scope: values.scope } : {}),
    ...(prompt === undefined ? {} : { prompt }),
  });
  return { session, prompt, tokenFile };
}

/**
 * `fn` with the prompt's loopback redirect listening (it listens only while a sign-in may need it, so a long
 * `task watch` holds no port open); the last of overlapping calls closes it.
 */
export function withPrompt(
  prompt: TerminalSignInPrompt | undefined,
): <T>(fn: () => Promise<T>) => Promise<T> {
  let users = 0;
  return async (fn) => {
    if (prompt === undefined) return fn();
    users++;
    try {
      await prompt.start();
      return await fn();
    } finally {
      if (--users === 0) await prompt.close();
    }
  };
}

/** What the transport asks of the sign-in, with the prompt listening only while a challenge is answered. */
export function signInAuth({ session, prompt }: SignInSession): ClientAuth {
  const asking = withPrompt(prompt);
  return {
    token: (signal) => session.token(signal),
    challenge: (response, signal) => asking(() => session.challenge(response, signal)),
  };
}

/** A sign-in as `--output json` shows it: who, where, which client and scopes, never a token or a secret. */
export function publicRecord(record: SignInRecord): Record<string, unknown> {
  const { clientSecret: _secret, ...client } = record.client;
  const tokens = record.tokens;
  return {
    resource: record.resource,
    issuer: record.issuer,
    client,
    ...(tokens?.scope === undefined ? {} : { scope: tokens.scope }),
    ...(tokens?.expiresAt === undefined ? {} : { expiresAt: new Date(tokens.expiresAt).toISOString() }),
    refreshable: tokens?.refreshToken !== undefined,
    updatedAt: record.updatedAt,
  };
}
