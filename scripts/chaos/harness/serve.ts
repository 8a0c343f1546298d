// `durable-mcp serve` children (or `gateway`, or another script that prints the same listening line): started in a
// scope, ready once they print their listening line, killed hard.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { BIN } from './paths.js';
import type { Scope } from './scope.js';
import { now } from './time.js';

const TAIL_BYTES = 65_536;

export interface ServeProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  pid: number | undefined;
  /** The MCP endpoint, once listening. */
  url: string;
  port: number | undefined;
  ready: boolean;
  dead: boolean;
  /** Set by a driver that is about to kill it: its exit is planned. */
  doomed?: boolean;
  startedAt: number;
  stderr(): string;
  /** Resolves with the exit code or signal. */
  exited: Promise<number | NodeJS.Signals | null>;
  /** Resolves when it listens; rejects when it exits first or does not start in time. */
  started: Promise<void>;
}

export interface ServeOptions {
  env?: Record<string, string>;
  timeoutMs?: number;
  nodeArgs?: readonly string[];
  /** What node runs instead of `bin/durable-mcp.js serve`: a script and its leading arguments. */
  command?: readonly string[];
}

/**
 * Starts `node bin/durable-mcp.js serve …` in the scope; `started` resolves when it prints its listening line. The
 * returned object's `ready` is false until then; `exited` resolves with the exit code or signal.
 */
export function startServe(scope: Scope, args: readonly string[], options: ServeOptions = {}): ServeProcess {
  const { env = {}, timeoutMs = 20_000, nodeArgs = [], command = [BIN, 'serve'] } = options;
  const child = spawn(process.execPath, [...nodeArgs, ...command, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  scope.adopt(child);
  let err = '';
  const proc: Omit<ServeProcess, 'started'> = {
    child,
    pid: child.pid,
    url: '',
    port: undefined,
    ready: false,
    dead: false,
    startedAt: now(),
    stderr: () => err,
    exited: new Promise((resolveExit) =>
      child.on('exit', (code, signal) => {
        proc.dead = true;
        proc.ready = false;
        resolveExit(signal ?? code);
      }),
    ),
  };
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
    if (err.length > TAIL_BYTES * 2) err = err.slice(-TAIL_BYTES);
  });
  const started = listening(proc, timeoutMs);
  started.catch(() => undefined);
  return Object.assign(proc, { started });
}

/** Resolves when the child prints its listening line; rejects on exit or after `timeoutMs`. */
function listening(proc: Omit<ServeProcess, 'started'>, timeoutMs: number): Promise<void> {
  let out = '';
  return new Promise((resolveStart, rejectStart) => {
    const timer = setTimeout(() => {
      proc.child.kill('SIGKILL');
      rejectStart(new Error(`serve did not start within ${timeoutMs} ms: ${proc.stderr().slice(-2_000)}`));
    }, timeoutMs);
    proc.child.stdout.on('data', (c: Buffer) => {
      if (proc.ready) return;
      out += c.toString();
      const m = /^listening on (http:\/\/[^\s]+\/mcp)$/m.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      proc.url = m[1] as string;
      proc.port = Number(new URL(proc.url).port);
      proc.ready = true;
      resolveStart();
    });
    void proc.exited.then((code) => {
      clearTimeout(timer);
      if (!proc.ready)
        rejectStart(new Error(`serve exited (${code}) before listening: ${proc.stderr().slice(-2_000)}`));
    });
  });
}

/**
 * What a crashed server printed, headline first: its JSON log lines dropped, the unhandled error named (with its
 * code and the kind of object that emitted it), then the tail of the trace.
 */
export function crashExcerpt(stderr: string): string {
  const text = stderr
    .split('\n')
    .filter((l) => !l.startsWith('{'))
    .join('\n')
    .trim();
  const unhandled = /Unhandled 'error' event\s*\n\s*\^\s*\n+\s*(.+)/.exec(text);
  const headline = unhandled
    ? `unhandled 'error' event: ${(unhandled[1] as string).trim()}`
    : (text.split('\n').find((l) => /Error\b|error:/.test(l)) ?? text.split('\n')[0] ?? '(no output)');
  const code = /\bcode: '([^']+)'/.exec(text);
  const emitter = /Emitted 'error' event on (\w+) instance/.exec(text);
  return `${headline.trim()}${code ? ` (${code[1]})` : ''}${emitter ? `, emitted on a ${emitter[1]} with no 'error' listener` : ''}\n${text.slice(-2_500)}`;
}

/** SIGKILLs a serve child and waits until the OS has reaped it. */
export async function killHard(proc: ServeProcess): Promise<void> {
  if (!proc.dead) {
    try {
      proc.child.kill('SIGKILL');
    } catch {
      // gone already
    }
  }
  await proc.exited;
}

/** Resident set size of a process in bytes (Linux /proc), or undefined when it is gone. */
export function rssOf(pid: number | undefined): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return m === null ? undefined : Number(m[1]) * 1024;
  } catch {
    return undefined;
  }
}
