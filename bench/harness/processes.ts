// Child processes of the run: starting them (HTTP servers that print their URL, or children driven over IPC),
// asking an IPC child for a measurement, stopping them, and the run's temporary directories.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOST, ROOT, START_TIMEOUT_MS, STOP_TIMEOUT_MS } from '../config.js';
import type { StartedProcess } from '../types.js';

/** How to start one kind of child: its node arguments, and whether it talks over IPC instead of HTTP. */
export interface ProcessSpec<C> {
  command: (ctx: C, name: string) => string[];
  ipc?: boolean;
  env?: (ctx: C, name: string) => Record<string, string>;
}

/** A message an IPC child sends: `ready`, a result, or an error. */
export interface ChildMessage {
  type?: string;
  message?: string;
  [field: string]: unknown;
}

const children = new Set<ChildProcess>();

/** Starts one child process and waits until it is ready: an HTTP server's URL, or an IPC child's `ready`. */
export async function startProcess<C extends { workDir: string }>(
  spec: ProcessSpec<C>,
  key: string,
  ctx: C,
): Promise<StartedProcess> {
  // stderr goes to a file, not through the harness: our server writes an audit line per task creation there,
  // and reading those would cost the load generator's CPU.
  const errPath = join(ctx.workDir, `${key}.stderr.log`);
  const errFd = openSync(errPath, 'w');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, spec.command(ctx, key), {
      cwd: ROOT,
      env: spec.env === undefined ? process.env : { ...process.env, ...spec.env(ctx, key) },
      stdio: spec.ipc ? ['ignore', 'ignore', errFd, 'ipc'] : ['ignore', 'pipe', errFd],
    });
  } finally {
    closeSync(errFd);
  }
  children.add(child);
  child.on('exit', () => children.delete(child));
  // A send to a child that is stopping fails through askChild's callback; never as an unhandled 'error' event.
  child.on('error', () => undefined);
  const target = await waitForStart(key, child, spec.ipc === true, errPath);
  return spec.ipc ? target : checkLoopback(key, target);
}

function waitForStart(
  key: string,
  child: ChildProcess,
  ipc: boolean,
  errPath: string,
): Promise<StartedProcess> {
  return new Promise((resolveStart, reject) => {
    let out = '';
    let settled = false;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done();
    };
    const fail = (why: string) => {
      if (settled) return;
      const err = readTail(errPath);
      settle(() => reject(new Error(`${key} server ${why}${err ? `; its stderr:\n${err}` : ''}`)));
    };
    const timer = setTimeout(
      () => fail(`did not start within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    child.on('exit', (code, signal) => fail(`exited early (${signal ?? code})`));
    if (ipc) {
      child.once('message', (msg: ChildMessage | undefined) =>
        msg?.type === 'ready'
          ? settle(() => resolveStart({ key, child, url: `ipc:${key}` }))
          : fail(`sent ${msg?.type === 'error' ? msg.message : JSON.stringify(msg)} instead of ready`),
      );
      return;
    }
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) settle(() => resolveStart({ key, child, url: m[1]! }));
    });
  });
}

function readTail(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim().slice(-4000);
  } catch {
    return '';
  }
}

/** Sends one message to an `ipc` child and resolves with its answer. */
export function askChild<T>(target: StartedProcess, message: object, timeoutMs: number): Promise<T> {
  const { child, key } = target;
  return new Promise((resolveAnswer, reject) => {
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      settle();
    };
    const onMessage = (msg: ChildMessage | undefined) =>
      msg?.type === 'error'
        ? done(() => reject(new Error(`${key}: ${msg.message}`)))
        : done(() => resolveAnswer(msg as T));
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      done(() => reject(new Error(`${key} exited (${signal ?? code})`)));
    const timer = setTimeout(
      () => done(() => reject(new Error(`${key} did not answer within ${timeoutMs / 1000} s`))),
      timeoutMs,
    );
    child.on('message', onMessage);
    child.on('exit', onExit);
    if (!child.connected) return done(() => reject(new Error(`${key} is gone`)));
    child.send(message, (err) => {
      if (err) done(() => reject(new Error(`${key}: ${err.message}`)));
    });
  });
}

function checkLoopback(key: string, target: StartedProcess): StartedProcess {
  const { hostname } = new URL(target.url);
  if (hostname !== HOST) throw new Error(`${key} server listens on ${hostname}, expected ${HOST} only`);
  return target;
}

/** Runs a child to its end (at most `timeoutMs`, then SIGKILL), resolving with what it printed. */
export function runChild(
  args: string[],
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolveRun({ code, signal, out, err });
    });
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      done();
    });
    child.kill('SIGTERM');
  });
}

export function stopAll(): Promise<void[]> {
  return Promise.all([...children].map(stopChild));
}

const workDirs = new Set<string>();

export function makeWorkDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-bench-'));
  workDirs.add(dir);
  return dir;
}

export function removeWorkDirs(): void {
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
  workDirs.clear();
}

/** Last resort on any exit path: no server process or temp dir outlives the harness. */
export function cleanUpNow(): void {
  for (const child of children) child.kill('SIGKILL');
  removeWorkDirs();
}
