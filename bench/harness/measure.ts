// Measurement: the pre-flight check of a row, one measured run of it (HTTP load, or its own `run`), and the
// interleaved warm-up and rounds over every row.
import { fmtInt, fmtMiB, log } from '../format.js';
import {
  isHttpScenario,
  type HttpScenario,
  type Params,
  type RowState,
  type RunScenario,
  type Sample,
  type Scenario,
  type StartedProcess,
  type Target,
  type ThroughputSample,
  type Rounded,
} from '../types.js';
import { expectJsonRpcResult, send } from './http.js';
import { loadRun } from './load.js';
import { batchFigures, readBatchTotals } from './creation-batches.js';
import { pgPort, pgProbe, type PgBackend } from './pg-xacts.js';
import { clientPorts, cpuFigures, cpuSnapshot, ownPostgresPids } from './cpu-window.js';
import { targetCpuMs, targetWrittenBytes } from './proc-stats.js';
import type { RowFailures } from './failures.js';
import { askChild } from './processes.js';

/**
 * The client of the latency rows: a process of its own (bench/children/latency-client.ts) that does nothing but
 * the row it is asked to run, so that what it times is not held up by the harness's own work and garbage
 * collections (its heap holds autocannon and every earlier row's results). Set by `useLatencyClient`.
 */
let latencyClient: StartedProcess | undefined;
/** Settles when the latency client has answered every row sent to it so far. */
let latencyQueue: Promise<unknown> = Promise.resolve();

export function useLatencyClient(client: StartedProcess): void {
  latencyClient = client;
}

/** Whether the latency client is there to run latency rows (started, and still connected). */
export const hasLatencyClient = (): boolean => latencyClient?.child.connected === true;

/** A row's `run`, in the latency client for latency rows (their state comes back, as runs may advance it). */
async function runRow(scenario: RunScenario, target: Target, state: RowState | undefined, seconds: number) {
  if (scenario.kind !== 'latency' || latencyClient === undefined) {
    return scenario.run(target, state, seconds);
  }
  const client = latencyClient;
  const view = { key: target.key, url: target.url, urls: target.urls, store: target.store };
  // One row at a time: the pre-flight checks of different servers run side by side.
  const turn = latencyQueue.then(() =>
    askChild<{ sample: Sample; state?: RowState }>(
      client,
      { name: scenario.name, target: view, state, seconds },
      seconds * 1000 + 120_000,
    ),
  );
  latencyQueue = turn.catch(() => undefined);
  const answer = await turn;
  if (state !== undefined && answer.state !== undefined) Object.assign(state, answer.state);
  return answer.sample;
}

export async function verifyScenario(scenario: Scenario, target: Target, state: RowState | undefined) {
  let problem: string | undefined;
  if (!isHttpScenario(scenario)) {
    const sample = await runRow(scenario, target, state, 0.1);
    if (!(sample.ok > 0)) problem = `no operation completed in 0.1 s: ${JSON.stringify(sample)}`;
  } else {
    const res = await send(target, scenario.request(target, state));
    problem = await (scenario.verify ?? expectJsonRpcResult)(res.status, res.text, target);
  }
  if (problem !== undefined) {
    throw new Error(`scenario "${scenario.name}" failed its pre-flight check: ${problem}`);
  }
}

/** A per-operation figure from a counter read before and after a run; null without /proc or without operations. */
function perOp(
  before: number | undefined,
  after: number | undefined,
  ok: number,
  toUnits: (d: number) => number,
) {
  return before === undefined || after === undefined || ok === 0 ? null : toUnits(after - before);
}

async function measureHttp(
  scenario: HttpScenario,
  target: Target,
  state: RowState | undefined,
  params: Params,
  duration: number,
): Promise<ThroughputSample> {
  // The server's CPU time (all its replicas') over the run and its settle step (the worker finishing the run's
  // tasks).
  const cpuBefore = targetCpuMs(target);
  const writtenBefore = targetWrittenBytes(target);
  const sample = await loadRun(scenario.request(target, state), target, params, duration);
  if (scenario.settle !== undefined) Object.assign(sample, await scenario.settle(target, state));
  const { ok } = sample;
  sample.cpuUs = perOp(cpuBefore, targetCpuMs(target), ok, (ms) => Math.round((ms * 1000 * 10) / ok) / 10);
  sample.writtenKb = perOp(
    writtenBefore,
    targetWrittenBytes(target),
    ok,
    (bytes) => Math.round((bytes / 1024 / ok) * 100) / 100,
  );
  return sample;
}

function measure(
  scenario: Scenario,
  target: Target,
  state: RowState | undefined,
  params: Params,
  duration: number,
): Promise<Sample> {
  if (!isHttpScenario(scenario)) return runRow(scenario, target, state, duration);
  return measureHttp(scenario, target, state, params, duration);
}

/** The pids of a target's processes (its replicas, or a raw child). */
const targetPids = (target: Target) => target.children.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));

/**
 * A measured run; a pg throughput row's also with the writing transactions PostgreSQL committed per operation, and
 * where the machine's CPU went meanwhile (harness/cpu-window.ts): PostgreSQL's, the load generator's, the kernel's
 * and other work's.
 */
async function measureRound(
  scenario: Scenario,
  target: Target,
  state: RowState | undefined,
  params: Params,
): Promise<Sample> {
  const counted = scenario.needs === 'pg' && scenario.kind === undefined;
  if (!counted) return measure(scenario, target, state, params, params.duration);
  const before = await pgProbe();
  // Our replicas' creation batches (a store that keeps none, or a raw child, gives none).
  const http = isHttpScenario(scenario);
  const batchesBefore = http ? await readBatchTotals(target.urls) : undefined;
  const portsBefore = clientPorts(targetPids(target), pgPort());
  const cpuBefore = cpuSnapshot(target, 'start');
  const sample = (await measure(scenario, target, state, params, params.duration)) as ThroughputSample;
  const cpuAfter = cpuSnapshot(target, 'end');
  const after = await pgProbe();
  const s = sample;
  s.xactsPerOp = perOp(before?.next, after?.next, s.ok, (n) => Math.round((n / s.ok) * 1000) / 1000);
  if (batchesBefore !== undefined)
    Object.assign(s, batchFigures(batchesBefore, await readBatchTotals(target.urls)));
  const ports = new Set([...portsBefore, ...clientPorts(targetPids(target), pgPort())]);
  const backends: PgBackend[] = [...(before?.backends ?? []), ...(after?.backends ?? [])];
  const own =
    before === undefined || after === undefined
      ? undefined
      : ownPostgresPids(backends, ports, new Map([...cpuBefore.postgres, ...cpuAfter.postgres]));
  Object.assign(
    s,
    cpuFigures(cpuBefore, cpuAfter, s.ok, {
      ...(own === undefined ? {} : { own }),
      load: http,
    }),
  );
  return s;
}

function fmtProgress(scenario: Scenario, sample: Sample): string {
  if (scenario.kind === 'memory' && 'bytesPerStream' in sample) {
    return `${fmtInt(sample.bytesPerStream).padStart(8)} bytes/stream (RSS ${fmtInt(sample.rssPerStream)})`;
  }
  if (scenario.kind === 'latency' && 'latencies' in sample) {
    return `${String(sample.ok).padStart(6)} events  p50 ${sample.p50} ms  p99 ${sample.p99} ms`;
  }
  if (scenario.kind === 'footprint' && 'rssGrowth' in sample) {
    return `RSS +${fmtMiB(sample.rssGrowth)} MiB, heap + external +${fmtMiB(sample.heapGrowth)} MiB since start`;
  }
  const s = sample as ThroughputSample;
  const drain =
    s.backlog === undefined ? '' : `  (worker backlog ${fmtInt(s.backlog)}, drained in ${s.drainMs} ms)`;
  return `${fmtInt(s.rps).padStart(8)} ops/s${drain}`;
}

export type Targets = Record<string, Target>;
export type States = Map<string, RowState | undefined>;

/**
 * Measured rounds: in each, every row that has not failed runs once, in table order. A row whose run throws is
 * recorded in `failures` and left out from then on; the others go on.
 */
export async function runRounds(
  scenarios: Scenario[],
  targets: Targets,
  states: States,
  params: Params,
  failures: RowFailures,
): Promise<Map<string, Array<Rounded<Sample>>>> {
  const samples = new Map<string, Array<Rounded<Sample>>>(scenarios.map((s) => [s.name, []]));
  for (let round = 1; round <= params.rounds; round++) {
    for (const s of scenarios.filter((x) => !failures.has(x.name))) {
      try {
        const sample = await measureRound(s, targets[s.server]!, states.get(s.name), params);
        samples.get(s.name)!.push({ round, ...sample });
        log(`round ${round}/${params.rounds}  ${s.name.padEnd(40)} ${fmtProgress(s, sample)}`);
      } catch (err) {
        failures.add(s.name, `round ${round}`, err);
      }
    }
  }
  return samples;
}

/** The discarded warm-up run of every row that has not failed (a row whose run throws fails). */
export async function warmUp(
  scenarios: Scenario[],
  targets: Targets,
  states: States,
  params: Params,
  failures: RowFailures,
) {
  if (params.warmup <= 0) return;
  for (const s of scenarios.filter((x) => !failures.has(x.name))) {
    try {
      const sample = await measure(s, targets[s.server]!, states.get(s.name), params, params.warmup);
      log(`warm-up ${params.warmup} s  ${s.name.padEnd(40)} ${fmtProgress(s, sample)}`);
    } catch (err) {
      failures.add(s.name, 'warm-up', err);
    }
  }
}

/**
 * Setup and pre-flight check of every row that has not failed: in table order per server, the servers side by side.
 * A row whose setup or check throws fails; the next rows of its server still get theirs.
 */
export async function prepare(
  scenarios: Scenario[],
  targets: Targets,
  failures: RowFailures,
): Promise<States> {
  const states: States = new Map();
  const live = scenarios.filter((s) => !failures.has(s.name));
  const servers = [...new Set(live.map((s) => s.server))];
  await Promise.all(
    servers.map(async (key) => {
      for (const s of live.filter((x) => x.server === key)) {
        const target = targets[s.server]!;
        let stage = 'setup';
        try {
          states.set(s.name, s.setup === undefined ? undefined : await s.setup(target));
          stage = 'pre-flight';
          await verifyScenario(s, target, states.get(s.name));
        } catch (err) {
          failures.add(s.name, stage, err);
        }
      }
    }),
  );
  return states;
}
