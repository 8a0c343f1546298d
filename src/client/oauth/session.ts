// A sign-in to one MCP server: the HTTP transport's ClientAuth (a fresh token per request, refreshed before it
// expires; a new sign-in or step-up when the server challenges) plus signing in and out on purpose. One refresh or
// sign-in at a time: concurrent requests wait for the one in flight.
import { parseBearerChallenge } from './challenge.js';
import {
  authorizationServer,
  createSessionState,
  expiring,
  loadRecord,
  single,
  tokenContext,
  type SessionState,
} from './session-state.js';
import { answerChallenge, refresh, signInNow } from './sign-in.js';
import { revokeTokens } from './tokens.js';
import { OAuthFlowError, type OAuthOptions, type OAuthSession } from './types.js';

/** The token to send: kept, refreshed when about to expire, or (machine client) a new one. */
async function currentToken(s: SessionState, signal?: AbortSignal): Promise<string | undefined> {
  if (s.flight !== undefined) await s.flight.catch(() => undefined);
  let record = await loadRecord(s);
  if (s.machine && (record?.tokens === undefined || expiring(s, record.tokens))) {
    record = await single(s, () => signInNow(s, s.options.scope, signal));
  } else if (record?.tokens?.refreshToken !== undefined && expiring(s, record.tokens)) {
    const stale = record;
    // A refresh that could not be made (the server unreachable) leaves the old token to the server's judgement.
    record = await single(s, () => refresh(s, stale, signal)).catch(() => stale);
  }
  return record?.tokens?.accessToken;
}

async function signOut(s: SessionState, signal?: AbortSignal) {
  const record = await loadRecord(s);
  if (record === undefined) return { removed: false, revoked: false };
  let revoked = false;
  if (record.tokens !== undefined) {
    const as = await authorizationServer(s, record.issuer, signal).catch(() => undefined);
    if (as !== undefined) {
      const ctx = await tokenContext(s, as, record.resource, record.client, signal);
      revoked = await revokeTokens(ctx, record.tokens);
    }
  }
  await s.store.delete(record.resource);
  return { removed: true, revoked };
}

export function createOAuth(options: OAuthOptions): OAuthSession {
  const s = createSessionState(options);
  return {
    token: (signal) => currentToken(s, signal),
    async challenge(response, signal) {
      if (response.status !== 401 && response.status !== 403) return false;
      if (response.status === 403) {
        const c = parseBearerChallenge(response.headers.get('www-authenticate'));
        if (c.error !== 'insufficient_scope') return false;
      }
      return (await single(s, () => answerChallenge(s, response, signal))) !== undefined;
    },
    async signIn(opts = {}) {
      const record = await single(s, () => signInNow(s, opts.scope ?? options.scope, opts.signal));
      if (record === undefined) throw new OAuthFlowError('the sign-in did not complete');
      return record;
    },
    signOut: (signal) => signOut(s, signal),
    record: () => loadRecord(s),
  };
}
