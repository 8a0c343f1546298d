// Signing in with the CLI to `serve` in JWT mode: `login` through the loopback redirect, a durable task that outlives
// several access tokens followed to its end with refreshes, no token anywhere but the token file, `logout` revoking,
// and then exit 4 naming `durable-mcp login`; a task stays its owner's across sign-ins of the same subject.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../support/cli.js';
import { cliEnv, loginThroughLoopback, runCli, tokenLeaks, type CliRun } from '../support/cli-sign-in.js';
import {
  jwtServeArgs,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../support/oauth-authorization-server.js';

const DURABLE_TOOLS = fileURLToPath(new URL('../fixtures/tools/durable-tools.mjs', import.meta.url));
/** The clock skew `serve` tolerates on `exp` (src/auth/jwt.ts): taken off by the authorization server. */
const SERVE_LEEWAY_SECONDS = 30;
const LIFETIME_SECONDS = 2;
/** The task's durable nap: three token lifetimes. */
const NAP_MS = 6_000;

let root: string;
let tokenFile: string;
let env: NodeJS.ProcessEnv;
let as: AuthorizationServer;
let server: ServeProcess;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'durable-mcp-oauth-cli-'));
  const home = join(root, 'home');
  const serverDir = join(root, 'server');
  mkdirSync(home);
  mkdirSync(serverDir);
  tokenFile = join(home, 'sign-ins.json');
  env = cliEnv(home, tokenFile);
  as = await startAuthorizationServer({
    accessTokenLifetimeSeconds: LIFETIME_SECONDS,
    verifierLeewaySeconds: SERVE_LEEWAY_SECONDS,
  });
  // No push streams (--max-listens 0): the client polls the task throughout, each poll with a live token.
  server = await startServe(
    [...jwtServeArgs(as, serverDir), '--tools', DURABLE_TOOLS, '--max-listens', '0'],
    15_000,
    { DURABLE_MCP_TEST_LOG: join(serverDir, 'runs.log') },
  );
});

afterAll(async () => {
  server?.child.kill('SIGTERM');
  await server?.exited;
  await as?.close();
  rmSync(root, { recursive: true, force: true });
});

const tokenGrants = (grantType: string) =>
  as.requests.filter((r) => r.path === '/token' && r.grant_type === grantType);

describe('durable-mcp login, call and logout with OAuth', () => {
  it('signs in, refreshes through a task that outlives its tokens, leaks no token, signs out', async () => {
    const runs: CliRun[] = [];
    const run = async (...args: string[]) => {
      const r = await runCli([...args, '--url', server.url], env);
      runs.push(r);
      return r;
    };
    const login = await loginThroughLoopback(['--url', server.url], env);
    runs.push(login);
    expect(login.code, login.err).toBe(0);
    expect(`${login.out}${login.err}`).toContain(`Signed in to ${server.url}`);
    expect([login.callback.hostname, login.callback.pathname, login.callbackStatus]).toEqual([
      '127.0.0.1',
      '/callback',
      200,
    ]);
    expect(as.requests.filter((r) => r.path === '/register').map((r) => r.status)).toEqual([201]);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);

    const started = Date.now();
    const call = await run('call', 'nap_job', '--arg', 'id=oauth', '--arg', `ms=${NAP_MS}`);
    expect(call.code, call.err).toBe(0);
    expect(call.out).toBe('rested oauth\n');
    expect(Date.now() - started).toBeGreaterThanOrEqual(NAP_MS);
    const taskId = /task (task_\S+) created/.exec(call.err)?.[1];
    expect(taskId).toBeDefined();
    // Polled for three lifetimes, the task needed at least two tokens after the one of the sign-in.
    const refreshes = tokenGrants('refresh_token');
    expect(refreshes.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(2);
    expect(refreshes.filter((r) => r.status !== 200)).toEqual([]); // no spent refresh token sent again
    expect(tokenGrants('authorization_code').map((r) => r.status)).toEqual([200]);
    // Every access token was for this server (the resource indicator), and the file holds the latest sign-in.
    const access = as.issued.filter((t) => t.kind === 'access');
    expect(access.every((t) => t.resource === server.url)).toBe(true);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    const latestRefresh = as.issued.filter((t) => t.kind === 'refresh').at(-1)?.value as string;
    // The search below finds a token in a file: here the latest refresh token, in the token file only.
    expect(tokenLeaks([latestRefresh], {}, [root], [])).toEqual([`token #0 in ${tokenFile}`]);

    const logout = await run('logout');
    expect(logout.code, logout.err).toBe(0);
    expect(as.requests.filter((r) => r.path === '/revoke').map((r) => r.status)).toContain(200);
    expect(as.revoked.has(latestRefresh)).toBe(true);
    expect(readFileSync(tokenFile, 'utf8')).not.toContain(latestRefresh);

    const needed = await run('call', 'nap_job', '--arg', 'ms=1');
    expect(needed.code, needed.err).toBe(4);
    expect(needed.err).toContain('durable-mcp login');

    const texts: Record<string, string> = {
      'serve stdout': server.stdout(),
      'serve stderr': server.stderr(),
      'authorization server records': JSON.stringify(as.requests),
    };
    runs.forEach((r, i) => {
      texts[`${r.args.slice(0, 2).join(' ')} (#${i}) stdout`] = r.out;
      texts[`${r.args.slice(0, 2).join(' ')} (#${i}) stderr`] = r.err;
    });
    const tokens = as.issued.map((t) => t.value);
    expect(tokenLeaks(tokens, texts, [root], [tokenFile])).toEqual([]);
  }, 120_000);

  it('a task stays its owner’s across sign-ins of the same subject, and no one else’s', async () => {
    const login = await loginThroughLoopback(['--url', server.url], env);
    expect(login.code, login.err).toBe(0);
    const created = await runCli(['call', 'nap_job', '--arg', 'ms=1', '--detach', '--url', server.url], env);
    expect(created.code, created.err).toBe(0);
    const taskId = created.out.trim();
    expect(taskId).toMatch(/^task_/);
    expect((await runCli(['logout', '--url', server.url], env)).code).toBe(0);

    const again = await loginThroughLoopback(['--url', server.url], env);
    expect(again.code, again.err).toBe(0);
    const get = await runCli(['task', 'get', taskId, '--url', server.url], env);
    expect(get.code, get.err).toBe(0);
    expect(get.out).toContain(taskId);

    as.setSubject('someone-else');
    expect((await runCli(['logout', '--url', server.url], env)).code).toBe(0);
    const other = await loginThroughLoopback(['--url', server.url], env);
    expect(other.code, other.err).toBe(0);
    const foreign = await runCli(['task', 'get', taskId, '--url', server.url], env);
    expect(foreign.code).toBe(1);
    as.setSubject('user-1');
  }, 60_000);
});
