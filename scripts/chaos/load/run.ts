// Section 4, load: many durable tasks in flight on one `serve` process (SQLite), each polled by its own client at
// the pollIntervalMs the server suggested, answered at a random moment of the storm, and watched by push
// subscribers (subscriptions/listen with taskIds), while a probe keeps calling tools/list. Latencies (p50/p99) and
// the server's memory are recorded; every task must complete, every subscriber must see each of its tasks
// complete, and tools/list must stay responsive throughout.
import { join } from 'node:path';
import { Invariants } from '../harness/invariants.js';
import { CHAOS_TOOLS, COMMON_SERVE_FLAGS } from '../harness/paths.js';
import { rng as makeRng } from '../harness/random.js';
import { crashExcerpt, rssOf, startServe } from '../harness/serve.js';
import { now, sleep } from '../harness/time.js';
import { fmtInt, fmtMb, fmtMs, percentile, spread } from '../stats.js';
import type { LoadParams, SectionContext, SectionResult } from '../types.js';
import { LOAD_INVARIANTS, LoadRun, type LatencyKind } from './load-run.js';
import { createTasks, drain, openSubscribers, poller, probe, storm } from './storm.js';
import { rpc } from '../harness/rpc.js';

/** How much slower than idle tools/list may get at p99 during the storm, on top of the absolute bound. */
const IDLE_FACTOR = 50;

/** tools/list p99 of the idle server, from 20 sequential calls (the baseline the storm's bound scales with). */
async function idleListP99(l: LoadRun): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const list = await rpc(
      l.url,
      'tools/list',
      {},
      { agent: l.probeAgent, timeoutMs: 30_000, retryReused: true },
    );
    if (list.result !== undefined) times.push(list.ms);
  }
  return percentile(times, 99) ?? 0;
}

export interface LoadOptions extends SectionContext {
  params: LoadParams;
}

export async function runLoad({ params, scope, seed, progress }: LoadOptions): Promise<SectionResult> {
  const inv = Invariants.of(LOAD_INVARIANTS);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-load-');
  const server = startServe(scope, [
    ...COMMON_SERVE_FLAGS,
    ...['--store', join(dir, 'tasks.db'), '--tools', CHAOS_TOOLS],
    ...['--concurrency', String(params.concurrency), '--log-level', 'error'],
  ]);
  await server.started;
  const l = new LoadRun(server, scope, params, rng, inv);
  const { stats } = l;
  // The bound on tools/list during the storm grows with what the machine gives right now (other work may share it).
  const idleP99 = await idleListP99(l);
  let sampling = true;
  const sampler = (async () => {
    while (sampling && !scope.closed) {
      const rss = rssOf(server.pid);
      if (rss !== undefined) stats.rss?.push(rss);
      await sleep(1_000);
    }
  })();

  progress?.(`creating ${fmtInt(params.tasks)} tasks`);
  const createStart = now();
  await createTasks(l);
  stats.tasks = l.tasks.length;
  stats.createMs = now() - createStart;
  stats.pollIntervalMs = l.tasks[0]?.pollMs;

  const stormStart = now();
  for (const t of l.tasks) t.answerAt = stormStart + rng.int(1_000, Math.max(1_500, params.seconds * 800));
  progress?.(`opening ${params.subscribers} subscriptions`);
  const subOpening = openSubscribers(l);
  const pollers = l.tasks.map((t) => poller(l, t));
  let probing = true;
  const prober = probe(l, () => probing);
  await storm(l, stormStart, progress);
  await subOpening;
  stats.inFlightAtEnd = l.tasks.filter((t) => t.final === undefined).length;

  await drain(l, progress);
  l.stopping = true;
  probing = false;
  await Promise.all([...pollers, prober]);
  for (const s of l.subs) s.handle?.close();
  sampling = false;
  await sampler;

  check(l, idleP99);
  summarise(l, stormStart);
  stats.durationMs = now() - started;
  return { inv, stats };
}

function check(l: LoadRun, idleP99: number): void {
  const { inv, params, stats, tasks, subs, server } = l;
  for (const t of tasks) {
    inv.expect(
      'all-complete',
      t.final?.status === 'completed' &&
        JSON.stringify(t.final.result?.content ?? '').includes(`load ${t.n + 1} go${t.n}`),
      () =>
        `task ${t.id} (#${t.n}) ended ${t.final?.status ?? `still ${t.status}`} ${JSON.stringify(t.final?.result ?? t.final?.error ?? '').slice(0, 120)}`,
    );
  }
  inv.expect(
    'all-complete',
    tasks.length === params.tasks,
    `only ${tasks.length} of ${params.tasks} tasks created`,
  );
  for (const [i, s] of subs.entries()) {
    inv.expect('push-delivered', s.acked, `subscriber ${i} was never acknowledged`);
    const missing = s.watched.filter((t) => !s.completed.has(t.id));
    inv.expect(
      'push-delivered',
      missing.length === 0,
      () =>
        `subscriber ${i} never saw ${missing.length} of its ${s.watched.length} tasks complete (e.g. ${missing[0]?.id})`,
    );
  }
  stats.subscribers = subs.length;
  const rssMax = Math.max(0, ...(stats.rss ?? []));
  inv.expect(
    'bounded-memory',
    rssMax <= params.rssLimitMb * 1048576,
    `server RSS reached ${fmtMb(rssMax)} (limit ${params.rssLimitMb} MB)`,
  );
  const listP99 = percentile(l.lat.list, 99);
  const bound = Math.max(params.responsiveP99Ms, IDLE_FACTOR * idleP99);
  inv.expect(
    'responsive',
    listP99 !== undefined && listP99 <= bound,
    () =>
      `tools/list p99 ${fmtMs(listP99)} during the storm (bound ${fmtMs(bound)}: ${params.responsiveP99Ms} ms, or ` +
      `${IDLE_FACTOR} × the idle p99 of ${fmtMs(idleP99)} measured before it)`,
  );
  inv.expect('no-crash', !server.dead, () => `the server exited: ${crashExcerpt(server.stderr())}`);
  inv.ok('no-errors');
}

function summarise(l: LoadRun, stormStart: number): void {
  const { stats, params } = l;
  const rss = stats.rss ?? [];
  const rssMax = Math.max(0, ...rss);
  const entries = Object.entries(l.lat) as [LatencyKind, number[]][];
  const L = Object.fromEntries(entries.map(([k, a]) => [k, spread(a)])) as NonNullable<typeof stats.latency>;
  stats.latency = L;
  stats.rssStartBytes = rss[0];
  stats.rssMaxBytes = rssMax;
  stats.rssEndBytes = rss[rss.length - 1];
  delete stats.rss;
  stats.pollsPerSecond = Math.round(stats.polls / ((now() - stormStart) / 1000));
  stats.summaryLine = `${fmtInt(stats.tasks)} tasks, ${fmtInt(stats.subscribers)} subscribers, ${params.seconds} s storm: ${fmtInt(stats.polls)} polls (${fmtInt(stats.pollsPerSecond)}/s) p99 ${fmtMs(L.get.p99)}, create p99 ${fmtMs(L.create.p99)}, update p99 ${fmtMs(L.update.p99)}, tools/list p99 ${fmtMs(L.list.p99)} (max ${fmtMs(L.list.max)}), ${fmtInt(stats.notifications)} pushes, RSS max ${fmtMb(rssMax)}`;
}
