// The client library signed in with OAuth to `serve` in JWT mode: a client journals a durable task and stops; a
// client started after the access token expired resumes it from the journal, refreshing with the stored sign-in
// (nobody to ask), and follows it to its end. Neither the journal nor anything else but the token file holds a token.
// A token the server refuses while the client still trusts it is refreshed on the 401.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  createFileTokenStore,
  createMemoryTokenStore,
  createOAuth,
  type SignInPrompt,
} from '../../src/client-entry.js';
import { createSqliteJournal } from '../../src/journal.js';
import { startServe, type ServeProcess } from '../support/cli.js';
import { tokenLeaks } from '../support/cli-sign-in.js';
import {
  jwtServeArgs,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../support/oauth-authorization-server.js';

const DURABLE_TOOLS = fileURLToPath(new URL('../fixtures/tools/durable-tools.mjs', import.meta.url));
/** The clock skew `serve` tolerates on `exp` (src/auth/jwt.ts): taken off by the authorization server. */
const SERVE_LEEWAY_SECONDS = 30;

let dir: string;
let as: AuthorizationServer;
let server: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-oauth-client-'));
  as = await startAuthorizationServer({
    accessTokenLifetimeSeconds: 2,
    verifierLeewaySeconds: SERVE_LEEWAY_SECONDS,
  });
  server = await startServe([...jwtServeArgs(as, dir), '--tools', DURABLE_TOOLS], 15_000, {
    DURABLE_MCP_TEST_LOG: join(dir, 'runs.log'),
  });
});

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await as?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A browser that approves at once: the authorization server's redirect is read, not followed. */
const approvingBrowser: SignInPrompt = {
  redirectUri: 'http://127.0.0.1:9/callback',
  async authorize({ url }) {
    const res = await fetch(url, { redirect: 'manual' });
    const location = res.headers.get('location');
    if (res.status !== 302 || location === null) throw new Error(`authorization answered ${res.status}`);
    return new URL(location);
  },
};

describe('OAuth in the client library', () => {
  it('resumes a journaled task after its token expired, refreshing with the stored sign-in', async () => {
    const tokenFile = join(dir, 'sign-ins.json');
    const journalPath = join(dir, 'calls.journal');
    const first = createClient({
      url: server.url,
      journal: createSqliteJournal(journalPath),
      auth: createOAuth({
        serverUrl: server.url,
        store: createFileTokenStore(tokenFile),
        prompt: approvingBrowser,
      }),
    });
    const called = await first.callTool('nap_job', { id: 'resumed', ms: 4_000 });
    expect(called.kind).toBe('task');
    await first.close();
    expect(tokenGrants('authorization_code')).toEqual([200]);
    const stoppedAt = Date.now();
    const refreshedBefore = tokenGrants('refresh_token').length;

    // The access token of the sign-in has expired (the server would refuse it) by the time the next client starts.
    await new Promise((r) => setTimeout(r, 3_200));
    const second = createClient({
      url: server.url,
      journal: createSqliteJournal(journalPath),
      auth: createOAuth({ serverUrl: server.url, store: createFileTokenStore(tokenFile) }),
    });
    const resumed = await second.resumeAll();
    expect(resumed.failures).toEqual([]);
    expect(resumed.map((h) => h.taskId)).toEqual(called.kind === 'task' ? [called.task.taskId] : []);
    const outcome = await resumed[0]!.result();
    await second.close();
    expect(outcome).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'rested resumed' }] },
    });
    expect(Date.now() - stoppedAt).toBeGreaterThan(3_000);
    expect(tokenGrants('refresh_token').length).toBeGreaterThan(refreshedBefore);
    expect(tokenGrants('refresh_token').every((status) => status === 200)).toBe(true);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);

    const tokens = as.issued.map((t) => t.value);
    const texts = { 'serve stdout': server.stdout(), 'serve stderr': server.stderr() };
    expect(tokenLeaks(tokens, texts, [dir], [tokenFile])).toEqual([]);
  }, 60_000);

  it('a token the server refuses before the client expected is refreshed on the 401, and the request sent again', async () => {
    let lagMs = 0;
    const statuses: number[] = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      statuses.push(res.status);
      return res;
    };
    const auth = createOAuth({
      serverUrl: server.url,
      store: createMemoryTokenStore(),
      prompt: approvingBrowser,
      refreshSkewMs: 0,
      now: () => Date.now() - lagMs,
    });
    await auth.signIn();
    // From now on the client's clock lags a minute: to it the token has long to live, the server refuses it.
    lagMs = 60_000;
    await new Promise((r) => setTimeout(r, 3_200));
    const refreshedBefore = tokenGrants('refresh_token').length;
    const client = createClient({ url: server.url, auth, fetch: recording });
    const called = await client.callTool('nap_job', { id: 'lagging', ms: 1 });
    const outcome = called.kind === 'task' ? await called.task.result() : undefined;
    await client.close();
    expect(outcome).toMatchObject({ status: 'completed', result: { content: [{ text: 'rested lagging' }] } });
    expect(statuses[0]).toBe(401);
    expect(statuses[1]).toBe(200);
    expect(tokenGrants('refresh_token').length).toBeGreaterThan(refreshedBefore);
  }, 60_000);
});

function tokenGrants(grantType: string): number[] {
  return as.requests.filter((r) => r.path === '/token' && r.grant_type === grantType).map((r) => r.status);
}
