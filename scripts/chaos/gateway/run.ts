// The gateway sections: `durable-mcp gateway` replicas share one store (a SQLite file or a PostgreSQL schema) in front
// of an MCP server written with the official SDK v1 (test/fixtures/gateway/upstream-v1.mjs): most replicas reach one
// HTTP upstream process, the last ones run it as a stdio child each. Clients call its idempotent tool (slow_sum) and
// its non-idempotent one (send_payment) with random short durations, while a driver SIGKILLs replicas, the HTTP
// upstream (started again on its port) and stdio children, mostly right after a call reached the upstream. Then the
// store, the clients' last tasks/get and the upstream's call log are checked against the delivery rules (check.ts).
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readStore, type StoreLocation } from '../crash/store.js';
import { Invariants } from '../harness/invariants.js';
import { COMMON_SERVE_FLAGS } from '../harness/paths.js';
import { pgSchema } from '../harness/postgres.js';
import { rng as makeRng } from '../harness/random.js';
import { now, sleep } from '../harness/time.js';
import { fmtInt } from '../stats.js';
import type { GatewayParams, SectionContext, SectionResult } from '../types.js';
import { checkGateway, type UpstreamCall } from './check.js';
import { Fleet, type GatewayRun, type GatewayStats, type KillTarget } from './fleet.js';
import { GATEWAY_INVARIANTS } from './invariants.js';
import { Traffic } from './traffic.js';

export interface GatewayOptions extends SectionContext {
  backend: 'sqlite' | 'postgres';
  params: GatewayParams;
}

function prepare({ backend, params, scope, seed, pgUrl, progress }: GatewayOptions): {
  run: GatewayRun;
  store: StoreLocation;
} {
  const dir = scope.tempDir('durable-mcp-chaos-gateway-');
  const callsFile = join(dir, 'upstream-calls.jsonl');
  writeFileSync(callsFile, '');
  let store: StoreLocation;
  let storeArgs: string[];
  if (backend === 'sqlite') {
    store = { backend, file: join(dir, 'tasks.db') };
    storeArgs = ['--store', store.file];
  } else {
    store = { backend, url: pgUrl, schema: pgSchema(scope, pgUrl, 'gateway') };
    storeArgs = ['--store', pgUrl, '--pg-schema', store.schema, '--pg-pool-size', '4'];
  }
  const stats: GatewayStats = {
    kills: { gateway: 0, 'http-upstream': 0, 'stdio-upstream': 0 },
    restarts: 0,
    created: 0,
    transient: {},
  };
  const run: GatewayRun = {
    params,
    scope,
    rng: makeRng(seed),
    inv: Invariants.of(GATEWAY_INVARIANTS),
    stats,
    callsFile,
    storeArgs,
    serveFlags: COMMON_SERVE_FLAGS,
    progress,
  };
  return { run, store };
}

/** The planned kills, in a random order. */
function killPlan({ params, rng }: GatewayRun): KillTarget[] {
  const plan: KillTarget[] = [
    ...Array<KillTarget>(params.gatewayKills).fill('gateway'),
    ...Array<KillTarget>(params.httpUpstreamKills).fill('http-upstream'),
    ...Array<KillTarget>(params.stdioUpstreamKills).fill('stdio-upstream'),
  ];
  for (let i = plan.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [plan[i], plan[j]] = [plan[j] as KillTarget, plan[i] as KillTarget];
  }
  return plan;
}

/** Resolves when the next call reaches the upstream (its log grows), or after `ms`. */
async function nextCall(file: string, ms: number): Promise<void> {
  const size = statSync(file).size;
  const until = now() + ms;
  while (now() < until && statSync(file).size === size) await sleep(5);
}

async function killOne(run: GatewayRun, fleet: Fleet, target: KillTarget): Promise<boolean> {
  if (target === 'http-upstream') return fleet.kill('http-upstream');
  if (target === 'stdio-upstream') return fleet.killStdioChild();
  const live = fleet.live();
  return live.length > 0 && fleet.kill(run.rng.pick(live));
}

/** Makes the planned kills within the chaos time, each right after a call reached the upstream when one does. */
async function runKills(run: GatewayRun, fleet: Fleet, started: number): Promise<void> {
  const { params, rng, scope } = run;
  for (const target of killPlan(run)) {
    if (now() - started > params.chaosMs || scope.closed) break;
    await sleep(rng.int(params.gapMinMs, params.gapMaxMs));
    let done = false;
    for (let i = 0; i < 30 && !done && !scope.closed; i++) {
      await nextCall(run.callsFile, 1_000);
      await sleep(rng.int(0, 50));
      done = await killOne(run, fleet, target);
      if (!done) await sleep(100);
    }
  }
}

/**
 * How long every task may take to end after the last kill: a lease (a killed replica's task is taken over), the
 * longest call, the longest wait of an idempotent call before its last attempt (1 s doubling, at most 30 s, 20 %
 * jitter), a connect timeout, and slack.
 */
function settleBound(p: GatewayParams): number {
  const longestWait = Math.min(30_000, 1_000 * 2 ** Math.max(0, p.upstreamRetry - 2)) * 1.2;
  return p.leaseMs + p.msMax + longestWait + p.connectTimeoutMs + 10_000;
}

/** No more kills or new calls; every process back; every task must end within the bound. */
async function settle(
  run: GatewayRun,
  fleet: Fleet,
  traffic: Traffic,
  manager: Promise<void>,
): Promise<number> {
  const { inv, scope, params } = run;
  fleet.chaosOn = false;
  traffic.stopCreating = true;
  await manager;
  await fleet.restoreAll();
  const started = now();
  const bound = settleBound(params);
  while (traffic.drivers.size > 0 && now() - started < bound && !scope.closed) await sleep(50);
  const open = traffic.recs.filter((r) => r.final === undefined);
  inv.expect(
    'terminal',
    traffic.drivers.size === 0,
    () =>
      `${open.length} tasks not terminal ${bound} ms after the last kill: ${open
        .slice(0, 5)
        .map((r) => `${r.taskId ?? `(no handle for key ${r.key})`} ${r.tool}`)
        .join(', ')}`,
  );
  return now() - started;
}

const readCalls = (file: string): UpstreamCall[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as UpstreamCall)
    : [];

export async function runGateway(options: GatewayOptions): Promise<SectionResult> {
  const sectionStarted = now();
  const { run, store } = prepare(options);
  const { inv, stats, params } = run;
  const fleet = new Fleet(run);
  await fleet.startUpstream();
  for (const replica of fleet.replicas) fleet.startReplica(replica);
  await Promise.all(fleet.replicas.map((r) => r.proc?.started));
  const traffic = new Traffic(run, fleet);
  const manager = traffic.manage();
  const chaosStarted = now();
  await runKills(run, fleet, chaosStarted);
  stats.chaosMs = now() - chaosStarted;
  const { kills } = stats;
  inv.expect(
    'kills',
    kills.gateway >= params.gatewayKills &&
      kills['http-upstream'] >= params.httpUpstreamKills &&
      kills['stdio-upstream'] >= params.stdioUpstreamKills,
    () => `kills made: ${JSON.stringify(kills)} within ${params.chaosMs} ms`,
  );
  stats.settleMs = await settle(run, fleet, traffic, manager);
  await fleet.stopAll();
  for (const u of fleet.unplanned) inv.fail('no-crash', u);
  inv.ok('no-crash', params.gateways + 1 + stats.restarts - fleet.unplanned.length);

  const snapshot = await readStore(store);
  const findings = checkGateway(
    { tasks: snapshot.tasks, recs: traffic.recs, calls: readCalls(run.callsFile) },
    inv,
  );
  Object.assign(stats, findings, { durationMs: now() - sectionStarted });
  stats.summaryLine = summaryLine(stats);
  return { inv, stats };
}

function summaryLine(s: GatewayStats): string {
  const k = s.kills;
  const unknown = s.unknown ?? [];
  const listed = unknown
    .slice(0, 3)
    .map((u) => `${u.taskId} (${u.calls} call${u.calls === 1 ? '' : 's'})`)
    .join(', ');
  return `${fmtInt(k.gateway + k['http-upstream'] + k['stdio-upstream'])} kills (gateway ${k.gateway}, HTTP upstream ${k['http-upstream']}, stdio upstream ${k['stdio-upstream']}); ${fmtInt(s.tasks)} tasks (${fmtInt(s.byTool?.slow_sum)} slow_sum, ${fmtInt(s.byTool?.send_payment)} send_payment): ${fmtInt(s.byStatus?.completed ?? 0)} completed, ${fmtInt(unknown.length)} outcome unknown${unknown.length > 0 ? ` [${listed}${unknown.length > 3 ? ', …' : ''}]` : ''}, ${fmtInt(s.notSent)} not sent; ${fmtInt(s.upstreamCalls)} upstream calls, ${fmtInt(s.resent)} idempotent calls sent again`;
}
