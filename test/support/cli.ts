// Runs the built `durable-mcp` command in a child process for CLI tests.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

export const BIN = fileURLToPath(new URL('../../bin/durable-mcp.js', import.meta.url));

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  origin: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `durable-mcp serve` with the given flags and resolves once it prints its listening line. */
export function startServe(
  args: string[],
  timeoutMs = 15_000,
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  return startListening([BIN, 'serve', ...args], { timeoutMs, env });
}

export interface ListeningOptions {
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** Runs `node <argv>` and resolves once it prints "listening on <url>/mcp", the line `durable-mcp serve` prints. */
export function startListening(argv: string[], options: ListeningOptions = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, argv, {
    stdio: 'pipe',
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${argv.join(' ')} did not start: ${err}`));
    }, options.timeoutMs ?? 15_000);
    const onData = (): void => {
      const m = /^listening on (http:\/\/[^\s]+\/mcp)$/m.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      const url = m[1] as string;
      resolve({ child, url, origin: new URL(url).origin, stdout: () => out, stderr: () => err, exited });
    };
    child.stdout.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${argv.join(' ')} exited with ${code}: ${err}`));
    });
  });
}

export const mcpHeaders = (method: string, name?: string): Record<string, string> => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name === undefined ? {} : { 'mcp-name': name }),
});

export const envelope = (caps: Record<string, unknown> = {}): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': caps,
});

/** `node <argv>`, expected to stop at start: its exit code and stderr (killed after `timeoutMs` if it does not). */
export function startFails(
  argv: string[],
  env: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, argv, { stdio: 'pipe', env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

/** `serve` that is expected to stop at start: its exit code and stderr (killed after 15 s if it does not). */
export const serveFails = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
  startFails([BIN, 'serve', '--port', '0', ...args]);

/** A list for the `serve` processes a test starts: each is SIGKILLed, and its exit awaited, after every test. */
export function killedAfterEach(): ServeProcess[] {
  const procs: ServeProcess[] = [];
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      p.child.kill('SIGKILL');
      await p.exited;
    }
  });
  return procs;
}
