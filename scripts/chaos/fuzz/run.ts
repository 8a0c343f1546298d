// Section 3, bad input: property-based fuzzing of the whole HTTP surface of a real `serve` process (conformance
// tools, the tasks extension, the chaos tools and tools whose results cannot be serialized, on a SQLite store), at
// volume. The generators and the oracle are those of test/e2e/fuzz.test.ts (test/support/fuzz-model.ts): random JSON,
// strings and invalid UTF-8, truncated and near-valid requests, random ids, methods, params, _meta and header sets,
// every reply checked against the official schema (test/support/schema.ts) with the status, id echo and stream
// rules. This section adds the tasks surface (real and forged task ids), other HTTP methods and paths, pathological
// sizes (10k-deep nesting, ~1 MB strings, bodies over the limit) and a slowloris phase. The server must never answer
// 5xx (but -32603 to a result that cannot be serialized) or die, and its memory must stay bounded.
import { join } from 'node:path';
import { oversizeBody } from '../../../test/support/fuzz-model.js';
import { Invariants } from '../harness/invariants.js';
import { CHAOS_TOOLS, COMMON_SERVE_FLAGS, UNSERIALIZABLE_TOOLS } from '../harness/paths.js';
import { rng as makeRng } from '../harness/random.js';
import { rpc } from '../harness/rpc.js';
import type { Scope } from '../harness/scope.js';
import { crashExcerpt, rssOf, startServe, type ServeProcess } from '../harness/serve.js';
import { now, sleep } from '../harness/time.js';
import { fmtInt, fmtMb, fmtMs, percentile } from '../stats.js';
import type { FuzzParams, SectionContext, SectionResult } from '../types.js';
import { KINDS, runOne } from './cases.js';
import { FuzzRun, type FuzzStats } from './fuzz-run.js';
import { FUZZ_INVARIANTS } from './invariants.js';
import { pathologicalBodies, runPathological } from './pathological.js';
import { slowloris } from './slowloris.js';
import { buildArbitraries } from './surface.js';

export interface FuzzOptions extends SectionContext {
  params: FuzzParams;
}

function startServer(scope: Scope, dir: string, params: FuzzParams): ServeProcess {
  return startServe(
    scope,
    [
      ...COMMON_SERVE_FLAGS,
      ...[
        '--store',
        join(dir, 'tasks.db'),
        '--tools',
        `conformance,${CHAOS_TOOLS},${UNSERIALIZABLE_TOOLS}`,
        '--keep-alive-ms',
        '0',
      ],
      ...['--concurrency', '4', '--log-level', 'fatal'],
    ],
    { nodeArgs: params.heapMb ? [`--max-old-space-size=${params.heapMb}`] : [] },
  );
}

/** Real task ids for the tasks surface: some waiting for input, some finished. */
async function createTasks(url: string): Promise<string[]> {
  const taskIds: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await rpc(url, 'tools/call', {
      name: 'chaos_job',
      arguments: { steps: 1, inputs: i % 2, ms: 0 },
    });
    if (r.result?.taskId !== undefined) taskIds.push(r.result.taskId);
  }
  if (taskIds.length === 0) throw new Error(`could not create tasks for the fuzz run`);
  return taskIds;
}

/** The generated requests, from `parallel` workers, until the planned number or the deadline. */
async function generate(
  f: FuzzRun,
  params: FuzzParams,
  scope: Scope,
  deadline: number,
  progress?: (t: string) => void,
): Promise<void> {
  const pathological = pathologicalBodies(f.taskIds);
  const oversize = oversizeBody();
  const pathEvery = Math.max(200, Math.floor(params.requests / 300));
  let issued = 0;
  const worker = async (): Promise<void> => {
    while (f.stats.requests < params.requests && now() < deadline && !f.server.dead && !scope.closed) {
      const n = issued++;
      if (n % pathEvery === pathEvery - 1)
        await runPathological(f, pathological, oversize, Math.floor(n / pathEvery));
      else await runOne(f, f.rng.weighted(KINDS));
      if (n % 500 === 0) {
        await f.health();
        progress?.(
          `${fmtInt(f.stats.requests)}/${fmtInt(params.requests)} requests, ${f.stats.failures} failures, rss ${fmtMb(rssOf(f.server.pid))}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: params.parallel }, worker));
}

export async function runFuzz({ params, scope, seed, progress }: FuzzOptions): Promise<SectionResult> {
  const inv = Invariants.of(FUZZ_INVARIANTS);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-fuzz-');
  const server = startServer(scope, dir, params);
  await server.started;
  const stats: FuzzStats = {
    requests: 0,
    byKind: {},
    statuses: {},
    failures: 0,
    rssMaxBytes: 0,
    rssStartBytes: rssOf(server.pid),
    healthChecks: 0,
    slowSockets: 0,
    slowHealthMs: [],
  };
  const taskIds = await createTasks(server.url);
  const f = new FuzzRun(server, inv, rng, stats, seed, taskIds, buildArbitraries(taskIds));

  await generate(f, params, scope, started + params.boundMs - 60_000, progress);
  await f.health();
  inv.expect(
    'volume',
    stats.requests >= params.requests,
    `only ${stats.requests} of ${params.requests} requests within the time bound`,
  );
  progress?.(`slowloris: ${params.slowSockets} sockets`);
  await slowloris(f, params);
  await sleep(200);
  await f.health();
  conclude(f, params);
  stats.durationMs = now() - started;
  stats.summaryLine = `${fmtInt(stats.requests)} generated requests (${Object.entries(stats.byKind)
    .map(([k, n]) => `${k} ${fmtInt(n)}`)
    .join(
      ', ',
    )}), ${stats.failures} failures, RSS max ${fmtMb(stats.rssMaxBytes)}, slowloris ${stats.slowSockets} sockets (p99 ${fmtMs(stats.slowHealthP99)})`;
  return { inv, stats };
}

/** Memory and liveness at the end, and the figures of the report. */
function conclude(f: FuzzRun, params: FuzzParams): void {
  const { stats, inv, server, rssTrail } = f;
  stats.rssEndBytes = rssOf(server.pid);
  inv.expect(
    'bounded-memory',
    stats.rssMaxBytes <= params.rssLimitMb * 1048576,
    `server RSS reached ${fmtMb(stats.rssMaxBytes)} (limit ${params.rssLimitMb} MB)`,
  );
  inv.expect('no-crash', !server.dead, () => `the server exited: ${crashExcerpt(server.stderr())}`);
  // Ten evenly spaced samples of the resident set over the run (is it levelling off or climbing?).
  stats.rssSamples = Array.from(
    { length: 10 },
    (_, i) => rssTrail[Math.floor(((rssTrail.length - 1) * i) / 9)],
  ).filter((v): v is number => v !== undefined);
  stats.slowHealthP99 = percentile(stats.slowHealthMs ?? [], 99);
  delete stats.slowHealthMs;
  stats.examples = f.failures.slice(0, 5).map((x) => `${x.kind}: ${x.why}`);
}
