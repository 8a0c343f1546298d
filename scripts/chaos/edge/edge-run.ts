// What the two HTTP edge sections share: their invariants and figures, the tokens file, the `serve` process, and the
// legitimate client that keeps probing from another loopback address while the attack runs.
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import type { Invariants } from '../harness/invariants.js';
import { ROOT } from '../harness/paths.js';
import { httpGet, rpc } from '../harness/rpc.js';
import type { Scope } from '../harness/scope.js';
import { startServe, type ServeProcess } from '../harness/serve.js';
import { now, sleep } from '../harness/time.js';
import { fmtMs, percentile } from '../stats.js';
import type { SectionStats } from '../types.js';

export const ABUSE_TOOLS = join(ROOT, 'test', 'fixtures', 'tools', 'abuse-tools.mjs');
/** Where the legitimate client connects from; the attackers use 127.0.0.1 (Linux routes all of 127/8 to lo). */
export const LEGIT_ADDRESS = '127.0.0.2';
const IDLE_FACTOR = 50;

const SERVED =
  "the legitimate client's requests (tools/list and /healthz, each on a connection of its own from another address) all succeed during the attack";
const RESPONSIVE =
  "the legitimate client's p99 during the attack stays within 1 s or 50 × its idle p99 measured in the same run, whichever is larger";
const ALIVE = 'the server stays up and answers /healthz at the end';

export const IDLE_INVARIANTS: Readonly<Record<string, string>> = {
  'legit-served': SERVED,
  'legit-responsive': RESPONSIVE,
  saturated: "the attacker's connections outnumber --max-connections (the attack reached the cap)",
  'idle-closed':
    'no attacker connection that sent nothing stays open longer than --headers-timeout-ms and 2 s of slack',
  alive: ALIVE,
};

export const STREAM_INVARIANTS: Readonly<Record<string, string>> = {
  'legit-served': SERVED.replace('the legitimate client', "another tenant's client"),
  'legit-responsive': RESPONSIVE.replace('the legitimate client', "another tenant's client"),
  'streams-capped':
    'each operator holds at most --max-admin-streams event streams and all together --max-admin-streams-total; every other attempt is 429 too_many_requests, and the open streams gauge counts what is held',
  'events-delivered': 'every stream held receives the task changes of its tenant',
  alive: ALIVE,
};

export interface EdgeStats extends SectionStats {
  idleP99Ms?: number;
  attackP99Ms?: number;
  legitRequests?: number;
  legitFailures?: number;
  /** Idle section: what the attacker's connections came to. */
  attackerOpened?: number;
  attackerPeakOpen?: number;
  attackerTimedOut?: number;
  attackerClosedQuietly?: number;
  attackerKeptClosed?: number;
  silentLifeMaxMs?: number;
  /** Stream section: attempts, streams held, refusals. */
  streamAttempts?: number;
  streamsHeld?: number;
  streamsRefused?: number;
  eventsDelivered?: number;
}

export interface Person {
  token: string;
  tenant: string;
  principal: string;
  roles?: string[];
}

/** Writes the tokens file of `serve --auth`. */
export function writeTokenFile(dir: string, people: readonly Person[]): string {
  const path = join(dir, 'tokens.json');
  writeFileSync(path, JSON.stringify({ tokens: people }));
  return path;
}

/** A `serve` process on a SQLite file of the scope's, with the flags given. */
export async function startEdgeServer(
  scope: Scope,
  dir: string,
  flags: readonly string[],
): Promise<ServeProcess> {
  const server = startServe(scope, [
    ...['--host', '127.0.0.1', '--port', '0', '--no-audit', '--log-level', 'error', '--tasks-get-rate', '0'],
    ...['--store', join(dir, 'tasks.db'), ...flags],
  ]);
  await server.started;
  return server;
}

/** What the legitimate client saw. */
export interface Probes {
  latency: number[];
  failures: string[];
}

/**
 * The legitimate client: tools/list and GET /healthz in turn, each on a new connection from `LEGIT_ADDRESS`, every
 * `everyMs`, until `running()` turns false or `count` requests were sent.
 */
export async function probe(
  url: string,
  token: string,
  everyMs: number,
  running: () => boolean,
  count = Infinity,
): Promise<Probes> {
  const agent = new Agent({ keepAlive: false, localAddress: LEGIT_ADDRESS });
  const out: Probes = { latency: [], failures: [] };
  try {
    for (let i = 0; i < count && running(); i += 1) {
      if (i % 2 === 0) {
        const r = await rpc(url, 'tools/list', {}, { agent, token, timeoutMs: 10_000 });
        if (r.status === 200 && r.result !== undefined) out.latency.push(r.ms);
        else out.failures.push(`tools/list: ${r.netError ?? r.status}`);
      } else {
        const r = await httpGet(url, '/healthz', { agent, timeoutMs: 10_000 });
        if (r.status === 200) out.latency.push(r.ms);
        else out.failures.push(`/healthz: ${r.netError ?? r.status}`);
      }
      await sleep(everyMs);
    }
  } finally {
    agent.destroy();
  }
  return out;
}

/** The idle baseline of the legitimate client: its p99 over 40 requests before any attack. */
export async function idleP99(url: string, token: string, everyMs: number): Promise<number> {
  const idle = await probe(url, token, everyMs, () => true, 40);
  return percentile(idle.latency, 99) ?? 0;
}

/** The service invariants of the legitimate client during the attack. */
export function checkService(inv: Invariants, stats: EdgeStats, idle: number, during: Probes): void {
  stats.idleP99Ms = idle;
  stats.legitRequests = during.latency.length + during.failures.length;
  stats.legitFailures = during.failures.length;
  inv.expect(
    'legit-served',
    during.failures.length === 0 && during.latency.length > 0,
    () =>
      `${during.failures.length} of ${stats.legitRequests} requests failed: ${during.failures.slice(0, 5).join('; ')}`,
  );
  const p99 = percentile(during.latency, 99);
  stats.attackP99Ms = p99;
  const bound = Math.max(1_000, IDLE_FACTOR * idle);
  inv.expect(
    'legit-responsive',
    p99 !== undefined && p99 <= bound,
    () => `p99 ${fmtMs(p99)} during the attack (bound ${fmtMs(bound)}; idle p99 ${fmtMs(idle)})`,
  );
}

/** The server is up and answers /healthz. */
export async function checkAlive(inv: Invariants, server: ServeProcess): Promise<void> {
  const health = await httpGet(server.url, '/healthz');
  inv.expect('alive', health.status === 200, `/healthz at the end: ${health.netError ?? health.status}`);
  inv.expect('alive', !server.dead, 'the server exited');
}

/** Runs `attack` for `ms` while the legitimate client probes; returns what the client saw. */
export async function during<T>(
  ms: number,
  everyMs: number,
  url: string,
  token: string,
  attack: (running: () => boolean) => Promise<T>,
): Promise<{ probes: Probes; attack: T }> {
  const end = now() + ms;
  const running = (): boolean => now() < end;
  const [probes, result] = await Promise.all([probe(url, token, everyMs, running), attack(running)]);
  return { probes, attack: result };
}
