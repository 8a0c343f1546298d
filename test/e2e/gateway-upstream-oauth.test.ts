// `durable-mcp gateway` in front of an OAuth-protected upstream (`durable-mcp serve --jwt-issuer … --jwks …`, the test
// authorization server issuing 2-second access tokens), over real processes: with client credentials
// (--upstream-client-id) and with the gateway's own sign-in made by `durable-mcp login` (--upstream-sign-in), a durable
// call that outlives the upstream's token completes and the next call goes with a new one, the authorization server
// having handed out new tokens as it went; a missing sign-in stops the gateway at start saying what to run; the flags
// that do not go together are usage errors; and no token or secret appears in the gateway's output or files.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { createFileTokenStore } from '../../src/client/oauth/index.js';
import { TOKENS, tokenFile, waitUntil } from '../support/admin-api.js';
import { cliEnv, loginThroughLoopback, tokenLeaks } from '../support/cli-sign-in.js';
import {
  BIN,
  killedAfterEach,
  startFails,
  startListening,
  startServe,
  type ServeProcess,
} from '../support/cli.js';
import { startAuthorizationServer, type AuthorizationServer } from '../support/oauth-authorization-server.js';

type Json = Record<string, unknown>;

const TOOLS = fileURLToPath(new URL('../fixtures/gateway/upstream-modern.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
/** The clock skew `serve` tolerates on `exp` (src/auth/jwt.ts), taken off by the authorization server. */
const SERVE_LEEWAY_SECONDS = 30;
const CLIENT = { clientId: 'durable-gateway', clientSecret: 'gateway-secret-0123456789' };

let dir: string;
let as: AuthorizationServer | undefined;
const procs = killedAfterEach();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-oauth-'));
  writeFileSync(join(dir, 'tokens.json'), tokenFile(true));
});

afterEach(async () => {
  await as?.close();
  as = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** The authorization server (2-second tokens, the gateway's client registered) and the upstream trusting it. */
async function protectedUpstream(): Promise<{ as: AuthorizationServer; upstream: ServeProcess }> {
  as = await startAuthorizationServer({
    accessTokenLifetimeSeconds: 2,
    verifierLeewaySeconds: SERVE_LEEWAY_SECONDS,
    preRegisteredClients: [CLIENT],
  });
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify(as.jwks));
  const upstream = await startServe(
    [
      ...['--tools', TOOLS, '--store', join(dir, 'upstream.db'), '--port', '0', '--tasks-get-rate', '0'],
      ...['--jwt-issuer', as.issuer, '--jwks', join(dir, 'jwks.json')],
    ],
    20_000,
  );
  procs.push(upstream);
  return { as, upstream };
}

/** The gateway's command line in front of `upstream`, on the test's SQLite file, its callers' tokens from the dir. */
const gatewayArgs = (upstream: string, extra: string[]): string[] => [
  BIN,
  'gateway',
  '--upstream',
  upstream,
  ...extra,
  ...['--store', join(dir, 'gateway.db'), '--port', '0', '--auth', join(dir, 'tokens.json')],
  ...['--tasks-get-rate', '0', '--shutdown-grace-ms', '200', '--log-level', 'info'],
];

async function startGateway(
  upstream: ServeProcess,
  extra: string[],
  env: Record<string, string | undefined>,
): Promise<ServeProcess> {
  const proc = await startListening(gatewayArgs(upstream.url, extra), {
    timeoutMs: 30_000,
    env: env as Record<string, string>,
  });
  procs.push(proc);
  return proc;
}

/** The gateway, expected to stop at start: its exit code and stderr. */
const gatewayFails = (upstream: string, extra: string[], env: Record<string, string> = {}) =>
  startFails(gatewayArgs(upstream, extra), env, 30_000);

/** slow_sum 2 + 3 over `ms` through the gateway, as a task followed to its end: the task as it ended. */
async function durableSum(gateway: ServeProcess, ms: number): Promise<Json> {
  const client = createHttpClient({ url: gateway.url, token: TOKENS.alice, capabilities: TASKS });
  const created = (await client.request('tools/call', { name: 'slow_sum', arguments: { a: 2, b: 3, ms } }))
    .result as Json;
  expect(created).toMatchObject({ resultType: 'task' });
  let task: Json = {};
  await waitUntil(
    async () => {
      task = (await client.request('tasks/get', { taskId: created.taskId })).result as Json;
      return ['completed', 'failed', 'cancelled'].includes(String(task.status));
    },
    'the task to end',
    60_000,
  );
  return task;
}

const grants = (server: AuthorizationServer, grantType: string): number =>
  server.requests.filter((r) => r.path === '/token' && r.grant_type === grantType && r.status === 200).length;

/** No token the authorization server issued, and no secret, in what `proc` printed or in the test's files. */
function expectNoCredentials(server: AuthorizationServer, proc: ServeProcess, except: string[] = []): void {
  const texts = { stdout: proc.stdout(), stderr: proc.stderr() };
  expect(texts.stdout + texts.stderr).not.toContain(CLIENT.clientSecret);
  const tokens = server.issued.map((t) => t.value);
  expect(tokenLeaks(tokens, texts, [dir], except)).toEqual([]);
}

describe('gateway in front of an OAuth-protected upstream', () => {
  it('with client credentials, completes a durable call that outlives the upstream token', async () => {
    const { as: server, upstream } = await protectedUpstream();
    const gateway = await startGateway(
      upstream,
      ['--upstream-client-id', CLIENT.clientId, '--upstream-client-secret-env', 'GW_UPSTREAM_SECRET'],
      { GW_UPSTREAM_SECRET: CLIENT.clientSecret },
    );
    const before = grants(server, 'client_credentials');
    expect(before).toBeGreaterThanOrEqual(1);
    const started = Date.now();
    const task = await durableSum(gateway, 5_000);
    expect(Date.now() - started).toBeGreaterThan(4_000);
    expect(task).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 5 } } });
    // The token the call started with has expired: the next call goes with a new one.
    expect(await durableSum(gateway, 0)).toMatchObject({ status: 'completed' });
    expect(grants(server, 'client_credentials')).toBeGreaterThan(before);
    expect(server.requests.every((r) => r.client_id === undefined || r.client_id === CLIENT.clientId)).toBe(
      true,
    );
    expectNoCredentials(server, gateway);
  });

  it('with its stored sign-in from durable-mcp login, refreshes it as it goes and writes the new tokens back', async () => {
    const { as: server, upstream } = await protectedUpstream();
    const home = join(dir, 'home');
    mkdirSync(home);
    const file = join(dir, 'signed-in.json');
    const env = cliEnv(home, file);
    const login = await loginThroughLoopback(['--url', upstream.url], env);
    expect(login.code).toBe(0);
    const signedIn = await createFileTokenStore(file).get(upstream.url);
    expect(signedIn?.tokens?.refreshToken).toBeDefined();
    const gateway = await startGateway(upstream, ['--upstream-sign-in'], env);
    const task = await durableSum(gateway, 5_000);
    expect(task).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 5 } } });
    expect(await durableSum(gateway, 0)).toMatchObject({ status: 'completed' });
    expect(grants(server, 'refresh_token')).toBeGreaterThanOrEqual(1);
    expect(grants(server, 'client_credentials')).toBe(0);
    const kept = await createFileTokenStore(file).get(upstream.url);
    expect(kept?.tokens?.refreshToken).toBeDefined();
    expect(kept?.tokens?.refreshToken).not.toBe(signedIn?.tokens?.refreshToken);
    expectNoCredentials(server, gateway, [file]);
  });

  it('without a stored sign-in, does not start, and says to run durable-mcp login', async () => {
    const { upstream } = await protectedUpstream();
    const file = join(dir, 'nobody.json');
    const { code, stderr } = await gatewayFails(upstream.url, ['--upstream-sign-in'], {
      DURABLE_MCP_TOKEN_FILE: file,
    });
    expect(code).not.toBe(0);
    expect(code).not.toBe(null);
    expect(stderr).toContain(`durable-mcp login --url ${upstream.url}`);
    expect(stderr).toContain(file);
  });

  it('refuses flags that do not go together, with a usage error', async () => {
    const upstream = 'http://127.0.0.1:9/mcp';
    const cases: [string[], RegExp][] = [
      [['--upstream-sign-in', '--upstream-token-env', 'HOME'], /--upstream-sign-in or --upstream-token-env/],
      [['--upstream-client-id', 'gw'], /--upstream-client-secret-env/],
      [
        [
          '--upstream-client-id',
          'gw',
          '--upstream-client-secret-env',
          'GW_S',
          '--upstream-tenant-tokens',
          'f',
        ],
        /--upstream-client-id or --upstream-tenant-tokens/,
      ],
    ];
    for (const [extra, message] of cases) {
      const { code, stderr } = await gatewayFails(upstream, extra, { GW_S: 'secret-value-here' });
      expect(code).toBe(2);
      expect(stderr).toMatch(message);
      expect(stderr).not.toContain('secret-value-here');
    }
    const stdio = await gatewayFails('stdio:node x.js', ['--upstream-sign-in']);
    expect(stdio).toMatchObject({ code: 2 });
    expect(stdio.stderr).toMatch(/HTTP upstream, not a stdio one/);
  });
});
