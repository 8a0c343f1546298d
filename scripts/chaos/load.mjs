// Section 4, load: many durable tasks in flight on one `serve` process (SQLite), each polled by its own client at
// the pollIntervalMs the server suggested, answered at a random moment of the storm, and watched by push
// subscribers (subscriptions/listen with taskIds), while a probe keeps calling tools/list. Latencies (p50/p99) and
// the server's memory are recorded; every task must complete, every subscriber must see each of its tasks
// complete, and tools/list must stay responsive throughout.
import { Agent } from 'node:http';
import { join } from 'node:path';
import {
  CHAOS_TOOLS,
  COMMON_SERVE_FLAGS,
  crashExcerpt,
  fmtInt,
  fmtMb,
  fmtMs,
  httpGet,
  Invariants,
  now,
  percentile,
  rng as makeRng,
  rpc,
  rssOf,
  sleep,
  startServe,
  subscribe,
} from './lib.mjs';

export const LOAD_INVARIANTS = {
  'all-complete': 'every task created during the storm completes, with the answer it was given',
  'push-delivered': 'every subscriber is acknowledged and receives the completion of each task it watches',
  responsive:
    'tools/list and /healthz answer throughout the storm: p99 of tools/list within 1 s, every probe within 5 s (the load generator shares the machine)',
  'no-errors': 'no request fails (no 5xx, no refused or reset connection, no timeout)',
  'bounded-memory': 'the server resident set stays under the limit',
  'no-crash': 'the server process stays up',
};

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export async function runLoad({ params, scope, seed, progress }) {
  const inv = new Invariants();
  for (const [name, description] of Object.entries(LOAD_INVARIANTS)) inv.define(name, description);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-load-');
  const server = startServe(scope, [
    ...COMMON_SERVE_FLAGS,
    '--store',
    join(dir, 'tasks.db'),
    '--tools',
    CHAOS_TOOLS,
    '--concurrency',
    String(params.concurrency),
    '--log-level',
    'error',
  ]);
  await server.started;
  const url = server.url;
  const pollAgent = new Agent({ keepAlive: true, maxSockets: 128 });
  const subAgent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 2 });
  const lat = { create: [], get: [], update: [], list: [], health: [], push: [] };
  const stats = { tasks: 0, subscribers: 0, polls: 0, updates: 0, notifications: 0, errors: {}, rss: [] };
  const error = (what, r) => {
    const key = `${what}: ${r.netError ?? `${r.status} ${r.error?.code ?? ''} ${String(r.error?.message ?? r.badBody ?? '').slice(0, 60)}`}`;
    stats.errors[key] = (stats.errors[key] ?? 0) + 1;
    inv.fail('no-errors', key);
  };
  let sampling = true;
  const sampler = (async () => {
    while (sampling && !scope.closed) {
      const rss = rssOf(server.pid);
      if (rss !== undefined) stats.rss.push(rss);
      await sleep(1_000);
    }
  })();

  // ----- phase 1: create the tasks
  progress?.(`creating ${fmtInt(params.tasks)} tasks`);
  const tasks = [];
  let next = 0;
  const creator = async () => {
    while (next < params.tasks && !scope.closed) {
      const n = next++;
      const r = await rpc(
        url,
        'tools/call',
        { name: 'chaos_load', arguments: { n } },
        { agent: pollAgent, timeoutMs: 60_000, retryReused: true },
      );
      if (r.result?.resultType !== 'task') {
        error('tools/call', r);
        continue;
      }
      lat.create.push(r.ms);
      tasks.push({
        n,
        id: r.result.taskId,
        pollMs: r.result.pollIntervalMs ?? 1_000,
        status: r.result.status,
        final: undefined,
      });
    }
  };
  const createStart = now();
  await Promise.all(Array.from({ length: 64 }, creator));
  stats.tasks = tasks.length;
  stats.createMs = now() - createStart;
  stats.pollIntervalMs = tasks[0]?.pollMs;

  // ----- phase 2: the storm
  const stormStart = now();
  const stormEnd = stormStart + params.seconds * 1_000;
  for (const t of tasks) t.answerAt = stormStart + rng.int(1_000, Math.max(1_500, params.seconds * 800));
  let stopping = false;

  // push subscribers, each watching a slice of the tasks
  const per = Math.ceil(tasks.length / Math.max(1, params.subscribers));
  const subs = [];
  const byId = new Map(tasks.map((t) => [t.id, t]));
  progress?.(`opening ${params.subscribers} subscriptions`);
  const openSub = async (i) => {
    const watched = tasks.slice(i * per, (i + 1) * per);
    if (watched.length === 0) return;
    const sub = { watched, completed: new Set(), acked: false, handle: undefined };
    subs.push(sub);
    sub.handle = subscribe(
      url,
      watched.map((t) => t.id),
      {
        agent: subAgent,
        timeoutMs: 60_000,
        onMessage: (msg) => {
          if (msg.method !== 'notifications/tasks') return;
          stats.notifications += 1;
          const id = msg.params?.taskId;
          if (msg.params?.status === 'completed' && !sub.completed.has(id)) {
            sub.completed.add(id);
            const t = byId.get(id);
            if (t?.ackedAt !== undefined) lat.push.push(now() - t.ackedAt);
          }
        },
      },
    );
    try {
      await sub.handle.ack;
      sub.acked = true;
    } catch (err) {
      inv.fail('push-delivered', `subscriber ${i}: ${err.message}`);
    }
  };
  const subOpening = (async () => {
    for (let i = 0; i < params.subscribers; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, params.subscribers - i) }, (_, k) => openSub(i + k)),
      );
    }
  })();

  // pollers: one per task, honouring pollIntervalMs
  const poller = async (t) => {
    await sleep(rng.int(0, t.pollMs));
    for (;;) {
      if (stopping || scope.closed) return;
      const r = await rpc(
        url,
        'tasks/get',
        { taskId: t.id },
        { agent: pollAgent, timeoutMs: 30_000, retryReused: true },
      );
      stats.polls += 1;
      if (r.result === undefined) error('tasks/get', r);
      else {
        lat.get.push(r.ms);
        t.status = r.result.status;
        if (TERMINAL.has(t.status)) {
          t.final = r.result;
          return;
        }
        if (t.status === 'input_required' && t.ackedAt === undefined) {
          await sleep(Math.max(0, t.answerAt - now()));
          const u = await rpc(
            url,
            'tasks/update',
            { taskId: t.id, inputResponses: { go: { action: 'accept', content: { v: `go${t.n}` } } } },
            { agent: pollAgent, timeoutMs: 30_000, retryReused: true },
          );
          stats.updates += 1;
          if (u.result === undefined) error('tasks/update', u);
          else {
            lat.update.push(u.ms);
            t.ackedAt = now();
          }
          // The poll cadence restarts after the answer.
        }
      }
      await sleep(t.pollMs);
    }
  };
  const pollers = tasks.map((t) => poller(t));

  // responsiveness probe
  let probing = true;
  const probe = (async () => {
    while (probing && !scope.closed) {
      const [list, health] = await Promise.all([
        rpc(url, 'tools/list', {}, { agent: probeAgent, timeoutMs: 30_000, retryReused: true }),
        httpGet(url, '/healthz', { agent: probeAgent, timeoutMs: 30_000, retryReused: true }),
      ]);
      if (list.result === undefined) error('tools/list', list);
      else lat.list.push(list.ms);
      if (health.status !== 200) error('/healthz', health);
      else lat.health.push(health.ms);
      inv.expect(
        'responsive',
        list.result !== undefined && list.ms <= params.responsiveMaxMs && health.ms <= params.responsiveMaxMs,
        () =>
          `tools/list ${Math.round(list.ms)} ms, /healthz ${Math.round(health.ms)} ms (bound ${params.responsiveMaxMs} ms)`,
      );
      await sleep(params.probeEveryMs);
    }
  })();

  while (now() < stormEnd && !scope.closed) {
    await sleep(1_000);
    const done = tasks.filter((t) => t.final !== undefined).length;
    progress?.(
      `storm ${Math.round((now() - stormStart) / 1000)}/${params.seconds} s: ${fmtInt(done)} done, ${fmtInt(stats.polls)} polls, ${fmtInt(stats.notifications)} pushes, rss ${fmtMb(rssOf(server.pid))}`,
    );
  }
  await subOpening;
  stats.inFlightAtEnd = tasks.filter((t) => t.final === undefined).length;

  // ----- phase 3: drain (pollers keep going until their task is done)
  const drainStart = now();
  const drainBound = 60_000;
  while (
    now() - drainStart < drainBound &&
    (tasks.some((t) => t.final === undefined) || subs.some((s) => s.completed.size < s.watched.length))
  ) {
    await sleep(250);
    progress?.(`drain: ${fmtInt(tasks.filter((t) => t.final === undefined).length)} tasks left`);
  }
  stats.drainMs = now() - drainStart;
  stopping = true;
  probing = false;
  await Promise.all([...pollers, probe]);
  for (const s of subs) s.handle?.close();
  sampling = false;
  await sampler;

  // ----- checks
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
  const rssMax = Math.max(0, ...stats.rss);
  inv.expect(
    'bounded-memory',
    rssMax <= params.rssLimitMb * 1048576,
    `server RSS reached ${fmtMb(rssMax)} (limit ${params.rssLimitMb} MB)`,
  );
  const listP99 = percentile(lat.list, 99);
  inv.expect(
    'responsive',
    listP99 !== undefined && listP99 <= params.responsiveP99Ms,
    () => `tools/list p99 ${fmtMs(listP99)} during the storm (bound ${params.responsiveP99Ms} ms)`,
  );
  inv.expect('no-crash', !server.dead, () => `the server exited: ${crashExcerpt(server.stderr())}`);
  inv.ok('no-errors');

  const pct = (a) => ({
    n: a.length,
    p50: percentile(a, 50),
    p99: percentile(a, 99),
    max: a.length === 0 ? undefined : Math.max(...a),
  });
  stats.latency = Object.fromEntries(Object.entries(lat).map(([k, a]) => [k, pct(a)]));
  stats.rssStartBytes = stats.rss[0];
  stats.rssMaxBytes = rssMax;
  stats.rssEndBytes = stats.rss[stats.rss.length - 1];
  delete stats.rss;
  stats.pollsPerSecond = Math.round(stats.polls / ((now() - stormStart) / 1000));
  stats.durationMs = now() - started;
  const L = stats.latency;
  stats.summaryLine = `${fmtInt(stats.tasks)} tasks, ${fmtInt(stats.subscribers)} subscribers, ${params.seconds} s storm: ${fmtInt(stats.polls)} polls (${fmtInt(stats.pollsPerSecond)}/s) p99 ${fmtMs(L.get.p99)}, create p99 ${fmtMs(L.create.p99)}, update p99 ${fmtMs(L.update.p99)}, tools/list p99 ${fmtMs(L.list.p99)} (max ${fmtMs(L.list.max)}), ${fmtInt(stats.notifications)} pushes, RSS max ${fmtMb(rssMax)}`;
  return { inv, stats };
}
