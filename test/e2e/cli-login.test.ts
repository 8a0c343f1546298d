// `durable-mcp login` and `logout` against `serve` in JWT mode and the test authorization server: the loopback
// redirect, the token file, stored tokens used by the other commands, exit 4 without a terminal, and no token, code
// or secret printed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, killedAfterEach, startServe, type ServeProcess } from '../support/cli.js';
import {
  jwtServeArgs,
  startAuthorizationServer,
  type AuthorizationServer,
} from '../support/oauth-authorization-server.js';

const procs = killedAfterEach();
const servers: AuthorizationServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  out: string;
  err: string;
}

interface Setup {
  as: AuthorizationServer;
  serve: ServeProcess;
  tokenFile: string;
}

async function setUp(
  options: Parameters<typeof startAuthorizationServer>[0] = {},
  serveEnv: Record<string, string> = {},
): Promise<Setup> {
  const as = await startAuthorizationServer(options);
  servers.push(as);
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-login-'));
  dirs.push(dir);
  const serve = await startServe([...jwtServeArgs(as, dir)], 15_000, serveEnv);
  procs.push(serve);
  return { as, serve, tokenFile: join(dir, 'config', 'tokens.json') };
}

/**
 * Runs the CLI (never on a terminal) with the token file of `setup`. `onErr` sees stderr as it grows (to follow the
 * printed sign-in URL as a browser would).
 */
function cli(
  setup: Setup,
  args: string[],
  onErr?: (err: string) => void,
  extraEnv: Record<string, string> = {},
): Promise<Run> {
  const { DURABLE_MCP_TOKEN: _token, DURABLE_MCP_CLIENT_SECRET: _secret, ...env } = process.env;
  const child = spawn(process.execPath, [BIN, ...args, '--url', setup.serve.url], {
    stdio: 'pipe',
    env: { ...env, DURABLE_MCP_TOKEN_FILE: setup.tokenFile, DISPLAY: '', WAYLAND_DISPLAY: '', ...extraEnv },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
    onErr?.(err);
  });
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    }),
  );
}

/** `login --no-browser`, following the printed URL as a browser would (the test server approves at once). */
async function login(setup: Setup, extra: string[] = [], env: Record<string, string> = {}): Promise<Run> {
  let followed: Promise<Response> | undefined;
  const run = await cli(
    setup,
    ['login', '--no-browser', ...extra],
    (err) => {
      const url = /^Open this URL to sign in: (\S+)$/m.exec(err)?.[1];
      if (url !== undefined) followed ??= fetch(url);
    },
    env,
  );
  if (followed !== undefined) expect((await followed).status).toBe(200);
  return run;
}

/** Every token the authorization server handed out: none may be printed. */
function expectNoTokens(as: AuthorizationServer, ...texts: string[]): void {
  for (const t of as.issued) for (const text of texts) expect(text).not.toContain(t.value);
}

describe('durable-mcp login', () => {
  it('signs in through the loopback redirect, keeps the tokens 0600, and the other commands use them', async () => {
    const setup = await setUp();
    const signedIn = await login(setup);
    expect(signedIn.code, signedIn.err).toBe(0);
    expect(signedIn.err).toMatch(/^Open this URL to sign in: http:\/\/127\.0\.0\.1:\d+\/authorize\?/m);
    expect(signedIn.out).toMatch(
      /^Signed in to http:\/\/127\.0\.0\.1:\d+\/mcp \(issuer http:\/\/127\.0\.0\.1:\d+\)$/m,
    );
    expect(statSync(setup.tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(setup.tokenFile, 'utf8')).toContain(setup.as.issuer);

    const tools = await cli(setup, ['tools']);
    expect(tools.code, tools.err).toBe(0);
    expect(tools.out).toMatch(/^echo/m);
    expectNoTokens(setup.as, signedIn.out, signedIn.err, tools.out, tools.err);
  });

  it('prints the sign-in as JSON without its tokens', async () => {
    const setup = await setUp();
    const signedIn = await login(setup, ['--output', 'json']);
    expect(signedIn.code, signedIn.err).toBe(0);
    const record = JSON.parse(signedIn.out) as Record<string, unknown>;
    expect(record).toMatchObject({ issuer: setup.as.issuer, refreshable: true });
    expect(record).not.toHaveProperty('tokens');
    expectNoTokens(setup.as, signedIn.out, signedIn.err);
  });

  it('without a terminal, a needed sign-in exits 4 naming the login command', async () => {
    const setup = await setUp();
    const called = await cli(setup, ['call', 'echo', '--arg', 'text=hi']);
    expect(called.code, called.err).toBe(4);
    const url = setup.serve.url;
    expect(called.err).toContain(`sign-in needed for ${url}: run "durable-mcp login --url ${url}"`);
    expect(called.err).not.toMatch(/did not arrive/);
  });

  it('--device shows a verification URL and a code, and signs in once they are approved', async () => {
    const setup = await setUp();
    let approved = false;
    const run = await cli(setup, ['login', '--device'], (err) => {
      const code = /enter the code (\S+)$/m.exec(err)?.[1];
      if (code !== undefined && !approved) approved = setup.as.approveDevice(code);
    });
    expect(run.code, run.err).toBe(0);
    expect(approved).toBe(true);
    expect(run.err).toMatch(/^To sign in, open http:\/\/127\.0\.0\.1:\d+\/\S+ and enter the code \S+$/m);
    expect(run.err).not.toMatch(/Open this URL to sign in/);
    expect(run.out).toMatch(/^Signed in to /m);
    expect(
      setup.as.requests.some((r) => r.grant_type === 'urn:ietf:params:oauth:grant-type:device_code'),
    ).toBe(true);
    expectNoTokens(setup.as, run.out, run.err);
  });

  it('signs in as a client registered by hand, its secret from $DURABLE_MCP_CLIENT_SECRET', async () => {
    const secret = 'cli-secret-0123456789abcdef';
    const setup = await setUp({
      registration: false,
      preRegisteredClients: [
        { clientId: 'cli-app', clientSecret: secret, redirectUris: ['http://127.0.0.1/callback'] },
      ],
    });
    const signedIn = await login(setup, ['--client-id', 'cli-app'], { DURABLE_MCP_CLIENT_SECRET: secret });
    expect(signedIn.code, signedIn.err).toBe(0);
    expect(setup.as.requests.some((r) => r.path === '/token' && r.status === 200)).toBe(true);
    expect(`${signedIn.out}${signedIn.err}`).not.toContain(secret);
    const tools = await cli(setup, ['tools']);
    expect(tools.code, tools.err).toBe(0);
  });

  it('says to pass --client-id when the server registers no clients', async () => {
    const setup = await setUp({ registration: false });
    const refused = await login(setup);
    expect(refused.code).toBe(3);
    expect(refused.err).toMatch(
      /^register a client with it, then run: durable-mcp login --url \S+ --client-id ID/m,
    );
  });
});

/** `tools` in a real terminal (script(1)), with `onScreen` seeing what it shows; its exit code and screen. */
function toolsOnTerminal(setup: Setup, onScreen: (screen: string) => void) {
  const { DURABLE_MCP_TOKEN: _token, ...env } = process.env;
  const command = `${process.execPath} ${BIN} tools --url ${setup.serve.url}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...env, DURABLE_MCP_TOKEN_FILE: setup.tokenFile, DISPLAY: '', WAYLAND_DISPLAY: '' },
  });
  let screen = '';
  child.stdout.on('data', (c: Buffer) => {
    screen += c.toString();
    onScreen(screen);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise<{ code: number | null; screen: string }>((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    }),
  );
}

describe('a client command on a terminal', () => {
  it('asks for the sign-in it needs: a device code where the server offers the grant', async () => {
    const setup = await setUp();
    let approved = false;
    const run = await toolsOnTerminal(setup, (screen) => {
      const code = /enter the code (\S+)/.exec(screen)?.[1];
      if (code !== undefined && !approved) approved = setup.as.approveDevice(code);
    });
    expect(run.code, run.screen).toBe(0);
    expect(approved).toBe(true);
    expect(run.screen).toMatch(/^echo/m);
    expectNoTokens(setup.as, run.screen);
  }, 40_000);

  it('else the authorization URL, answered on the loopback redirect', async () => {
    const setup = await setUp({ deviceGrant: false });
    let followed: Promise<Response> | undefined;
    const run = await toolsOnTerminal(setup, (screen) => {
      const url = /Open this URL to sign in: (\S+)/.exec(screen)?.[1];
      if (url !== undefined) followed ??= fetch(url);
    });
    expect(run.code, run.screen).toBe(0);
    expect((await followed)?.status).toBe(200);
    expect(run.screen).toMatch(/paste here the address the browser was sent to/);
    expect(run.screen).toMatch(/^echo/m);
    expect(readFileSync(setup.tokenFile, 'utf8')).toContain(setup.as.issuer);
  }, 40_000);
});

describe('following a task on stored tokens', () => {
  it('task watch keeps going while its access tokens expire and are refreshed', async () => {
    // Tokens live 2 s; the outline takes 6 s: the watch outlives several of them.
    const setup = await setUp(
      { accessTokenLifetimeSeconds: 2, verifierLeewaySeconds: 30 },
      {
        DURABLE_MCP_DEMO_OUTLINE_MS: '6000',
      },
    );
    expect((await login(setup)).code).toBe(0);
    const made = await cli(setup, ['call', 'generate_report', '--detach']);
    expect(made.code, made.err).toBe(0);
    const taskId = made.out.trim();
    // Without a terminal the watch ends when the task asks for its approval: after the outline, past every token.
    const watched = await cli(setup, ['task', 'watch', taskId]);
    expect(watched.code, watched.err).toBe(4);
    expect(watched.err).toMatch(/needs input \(approve_outline\)/);
    const refreshes = setup.as.requests.filter((r) => r.grant_type === 'refresh_token' && r.status === 200);
    expect(refreshes.length).toBeGreaterThanOrEqual(2);
    const answered = await cli(setup, [
      'task',
      'answer',
      taskId,
      '--responses',
      '{"approve_outline":{"action":"accept","content":{"approved":true}}}',
    ]);
    expect(answered.code, answered.err).toBe(0);
    const done = await cli(setup, ['task', 'watch', taskId]);
    expect(done.code, done.err).toBe(0);
    expect(done.out).toMatch(/Summary: done/);
    expectNoTokens(setup.as, made.out, made.err, watched.out, watched.err, done.out, done.err);
  });
});

describe('durable-mcp logout', () => {
  it('revokes and removes the tokens, then says there is nothing to do', async () => {
    const setup = await setUp();
    expect((await login(setup)).code).toBe(0);
    const out = await cli(setup, ['logout']);
    expect(out.code, out.err).toBe(0);
    expect(out.out).toMatch(/^Signed out of .*revoked/m);
    expect(setup.as.revoked.size).toBeGreaterThan(0);
    const again = await cli(setup, ['logout']);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(/^not signed in to .*nothing to do/m);
    const called = await cli(setup, ['tools']);
    expect(called.code).toBe(4);
  });
});
