// What a server under test is (how to start it, what it serves) and the command lines of our CLI that start most of
// them: `durable-mcp serve` and `durable-mcp gateway` on a store, under `--cpu-prof` when the run profiles.
import { join } from 'node:path';
import { HOST, ROOT, type StoreSize } from '../config.js';
import type { PgScaleFill, ScaleFill, SleepFill } from '../types.js';
import type { PgPlan } from './postgres.js';
import type { ProcessSpec } from './processes.js';

/** What the servers' commands need of the run. */
export interface RunContext {
  workDir: string;
  cpuProf: string | undefined;
  pg: PgPlan;
  /** Names of every process started, in order (the CPU profiles are named after them). */
  started: string[];
  scale?: ScaleFill;
  /** The PostgreSQL stored-task schemas of the operator list rows, once filled. */
  pgScale?: PgScaleFill;
  sleepers?: SleepFill | undefined;
}

/** What one server's command is given: the run's context and, for a server in front of another, that one's URL. */
export type ServerContext = RunContext & { upstreamUrl?: string };

export interface ServerSpec extends ProcessSpec<ServerContext> {
  label: string;
  /** Its SQLite file in the work dir, which rows read (read-only) to wait for the worker. */
  store?: string;
  /** The stored-task file it serves, whose sampled ids its rows read. */
  scale?: StoreSize;
  /** The sleeping-task file it serves, filled before the servers start. */
  sleepers?: StoreSize;
  pg?: boolean;
  replicas?: number;
  /**
   * The key of the server it stands in front of (a gateway's upstream): started first, even when no row of the
   * section uses it, and its URL handed to `command` as `ctx.upstreamUrl`.
   */
  upstream?: string;
}

export const cpuProfFlags = (ctx: RunContext, key: string): string[] =>
  ctx.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', ctx.cpuProf, '--cpu-prof-name', `${key}.cpuprofile`] : [];

/** `durable-mcp VERB --store STORE ARGS…` on loopback, any port; `key` names its CPU profile. */
function cliCommand(
  ctx: RunContext,
  key: string,
  verb: 'serve' | 'gateway',
  store: string,
  args: string[],
): string[] {
  return [
    ...cpuProfFlags(ctx, key),
    join(ROOT, 'bin', 'durable-mcp.js'),
    verb,
    '--host',
    HOST,
    '--port',
    '0',
    '--store',
    store,
    // All the bench's load is one principal: per-principal stream caps are not what it measures.
    '--max-listens',
    '100000',
    ...args,
  ];
}

/** `durable-mcp serve --store STORE` (a path or a postgres:// URL); `key` names its CPU profile. */
export const serveStore = (ctx: RunContext, key: string, store: string, args: string[]): string[] =>
  cliCommand(ctx, key, 'serve', store, args);

/** `durable-mcp serve` on a SQLite file in the run's temp dir; `key` names its CPU profile. */
export const serveCommand = (ctx: RunContext, key: string, store: string, args: string[]): string[] =>
  serveStore(ctx, key, join(ctx.workDir, store), args);

/** `durable-mcp gateway --upstream URL` (the URL of the server it fronts) on a SQLite file in the run's temp dir. */
export function gatewayCommand(ctx: ServerContext, key: string, store: string, args: string[]): string[] {
  if (ctx.upstreamUrl === undefined) throw new Error(`${key}: started without the URL of its upstream`);
  return cliCommand(ctx, key, 'gateway', join(ctx.workDir, store), ['--upstream', ctx.upstreamUrl, ...args]);
}
