// The CLI's sign-in in subprocesses for OAuth tests: commands run without blocking the test's event loop (the
// authorization server runs in it), `login --no-browser` driven through its loopback redirect as a browser would,
// and a search for tokens where they must not be.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from './cli.js';

export interface CliRun {
  args: string[];
  code: number | null;
  out: string;
  err: string;
}

/**
 * An environment of its own for the CLI: home and XDG folders under `home`, the token file `tokenFile`, and no
 * server or token from the test runner's environment.
 */
export function cliEnv(home: string, tokenFile: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DURABLE_MCP_URL', 'DURABLE_MCP_TOKEN', 'DISPLAY', 'WAYLAND_DISPLAY', 'BROWSER'])
    delete env[name];
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    DURABLE_MCP_TOKEN_FILE: tokenFile,
  };
}

export interface RunningCli {
  args: string[];
  stdout: () => string;
  stderr: () => string;
  done: Promise<CliRun>;
}

/** Starts `durable-mcp <args>` with stdin not a terminal (a pipe, closed at once); killed after `timeoutMs`. */
export function startCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<CliRun>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ args, code, out, err });
    }),
  );
  return { args, stdout: () => out, stderr: () => err, done };
}

export const runCli = (args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<CliRun> =>
  startCli(args, env, timeoutMs).done;

/** Resolves with the first match of `pattern` in `text()`, polling every 50 ms for up to `timeoutMs`. */
async function waitForMatch(
  text: () => string,
  pattern: RegExp,
  timeoutMs: number,
): Promise<RegExpExecArray> {
  for (let waited = 0; waited <= timeoutMs; waited += 50) {
    const m = pattern.exec(text());
    if (m !== null) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${pattern} within ${timeoutMs} ms in: ${text()}`);
}

export interface LoopbackLogin extends CliRun {
  /** Where the authorization server sent the browser: the CLI's loopback redirect. */
  callback: URL;
  /** The loopback redirect's answer to the browser. */
  callbackStatus: number;
}

/**
 * Runs `durable-mcp login --no-browser <args>` and plays the browser: reads the URL it prints, asks the authorization
 * server (which approves at once) without following its redirect, then GETs the redirect's Location, the CLI's loopback.
 */
export async function loginThroughLoopback(args: string[], env: NodeJS.ProcessEnv): Promise<LoopbackLogin> {
  const login = startCli(['login', '--no-browser', ...args], env);
  const exitedEarly = login.done.then((run) => {
    throw new Error(`login exited ${run.code} before printing a URL: ${run.err}`);
  });
  const printed = await Promise.race([
    waitForMatch(login.stderr, /^Open this URL to sign in: (\S+)$/m, 30_000),
    exitedEarly,
  ]);
  exitedEarly.catch(() => undefined);
  const approved = await fetch(printed[1] as string, { redirect: 'manual' });
  const location = approved.headers.get('location');
  if (approved.status !== 302 || location === null)
    throw new Error(`the authorization endpoint answered ${approved.status}, not a redirect`);
  const callback = new URL(location);
  const answer = await fetch(callback);
  await answer.arrayBuffer();
  return { ...(await login.done), callback, callbackStatus: answer.status };
}

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? filesUnder(path) : e.isFile() ? [path] : [];
  });
}

/**
 * Where any of `tokens` appears: in the named texts, or in a file under `dirs` other than `except`. Answers with
 * places and token numbers only, so a failing assertion does not print a token either. A JWT is also looked for by
 * its signature alone (a log that cut the token short).
 */
export function tokenLeaks(
  tokens: readonly string[],
  texts: Readonly<Record<string, string>>,
  dirs: readonly string[],
  except: readonly string[],
): string[] {
  const needles = tokens.map((t) => [t, ...(t.split('.').length === 3 ? [t.split('.')[2] as string] : [])]);
  const places: [string, Buffer][] = [
    ...Object.entries(texts).map(([name, text]): [string, Buffer] => [name, Buffer.from(text)]),
    ...dirs
      .flatMap(filesUnder)
      .filter((f) => !except.includes(f) && statSync(f).size < 256 * 1024 * 1024)
      .map((f): [string, Buffer] => [f, readFileSync(f)]),
  ];
  const leaks: string[] = [];
  needles.forEach((forms, i) => {
    for (const [name, content] of places)
      if (forms.some((needle) => needle.length >= 16 && content.includes(needle)))
        leaks.push(`token #${i} in ${name}`);
  });
  return leaks;
}
