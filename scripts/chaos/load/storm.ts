// The phases of the load section: the tasks created, then the storm — push subscribers watching slices of the
// tasks, one poller per task at the pollIntervalMs the server suggested (answering at a random moment), and a
// responsiveness probe — then the drain.
import { httpGet, rpc } from '../harness/rpc.js';
import { subscribe } from '../harness/subscribe.js';
import { now, sleep } from '../harness/time.js';
import { fmtInt, fmtMb } from '../stats.js';
import { rssOf } from '../harness/serve.js';
import type { LoadRun, LoadTask, Subscriber } from './load-run.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export async function createTasks(l: LoadRun): Promise<void> {
  let next = 0;
  const creator = async (): Promise<void> => {
    while (next < l.params.tasks && !l.scope.closed) {
      const n = next++;
      const r = await rpc(
        l.url,
        'tools/call',
        { name: 'chaos_load', arguments: { n } },
        { agent: l.pollAgent, timeoutMs: 60_000, retryReused: true },
      );
      if (r.result?.resultType !== 'task') {
        l.error('tools/call', r);
        continue;
      }
      l.lat.create.push(r.ms);
      l.tasks.push({
        n,
        id: r.result.taskId as string,
        pollMs: r.result.pollIntervalMs ?? 1_000,
        status: r.result.status,
        final: undefined,
      });
    }
  };
  await Promise.all(Array.from({ length: 64 }, creator));
}

/** Subscriber `i` watches its slice of the tasks and notes each completion pushed to it. */
async function openSub(l: LoadRun, i: number, per: number, byId: Map<string, LoadTask>): Promise<void> {
  const watched = l.tasks.slice(i * per, (i + 1) * per);
  if (watched.length === 0) return;
  const sub: Subscriber = { watched, completed: new Set(), acked: false, handle: undefined };
  l.subs.push(sub);
  sub.handle = subscribe(
    l.url,
    watched.map((t) => t.id),
    {
      agent: l.subAgent,
      timeoutMs: 60_000,
      onMessage: (msg) => {
        if (msg.method !== 'notifications/tasks') return;
        l.stats.notifications += 1;
        const params = msg.params as { taskId?: string; status?: string } | undefined;
        const id = params?.taskId as string;
        if (params?.status === 'completed' && !sub.completed.has(id)) {
          sub.completed.add(id);
          const t = byId.get(id);
          if (t?.ackedAt !== undefined) l.lat.push.push(now() - t.ackedAt);
        }
      },
    },
  );
  try {
    await sub.handle.ack;
    sub.acked = true;
  } catch (err) {
    l.inv.fail('push-delivered', `subscriber ${i}: ${(err as Error).message}`);
  }
}

/** Opens the subscribers, 50 at a time. */
export async function openSubscribers(l: LoadRun): Promise<void> {
  const { subscribers } = l.params;
  const per = Math.ceil(l.tasks.length / Math.max(1, subscribers));
  const byId = new Map(l.tasks.map((t) => [t.id, t]));
  for (let i = 0; i < subscribers; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, subscribers - i) }, (_, k) => openSub(l, i + k, per, byId)),
    );
  }
}

/** One poller per task, honouring pollIntervalMs; answers the input request at the task's moment. */
export async function poller(l: LoadRun, t: LoadTask): Promise<void> {
  await sleep(l.rng.int(0, t.pollMs));
  for (;;) {
    if (l.stopping || l.scope.closed) return;
    const r = await rpc(
      l.url,
      'tasks/get',
      { taskId: t.id },
      { agent: l.pollAgent, timeoutMs: 30_000, retryReused: true },
    );
    l.stats.polls += 1;
    if (r.result === undefined) l.error('tasks/get', r);
    else {
      l.lat.get.push(r.ms);
      t.status = r.result.status;
      if (TERMINAL.has(t.status as string)) {
        t.final = r.result;
        return;
      }
      if (t.status === 'input_required' && t.ackedAt === undefined) await answer(l, t);
    }
    await sleep(t.pollMs);
  }
}

// The poll cadence restarts after the answer.
async function answer(l: LoadRun, t: LoadTask): Promise<void> {
  await sleep(Math.max(0, (t.answerAt as number) - now()));
  const u = await rpc(
    l.url,
    'tasks/update',
    { taskId: t.id, inputResponses: { go: { action: 'accept', content: { v: `go${t.n}` } } } },
    { agent: l.pollAgent, timeoutMs: 30_000, retryReused: true },
  );
  l.stats.updates += 1;
  if (u.result === undefined) l.error('tasks/update', u);
  else {
    l.lat.update.push(u.ms);
    t.ackedAt = now();
  }
}

/** tools/list and /healthz every probeEveryMs, each within the bound. */
export async function probe(l: LoadRun, probing: () => boolean): Promise<void> {
  const { params, inv } = l;
  while (probing() && !l.scope.closed) {
    const [list, health] = await Promise.all([
      rpc(l.url, 'tools/list', {}, { agent: l.probeAgent, timeoutMs: 30_000, retryReused: true }),
      httpGet(l.url, '/healthz', { agent: l.probeAgent, timeoutMs: 30_000 }),
    ]);
    if (list.result === undefined) l.error('tools/list', list);
    else l.lat.list.push(list.ms);
    if (health.status !== 200) l.error('/healthz', health);
    else l.lat.health.push(health.ms);
    inv.expect(
      'responsive',
      list.result !== undefined && list.ms <= params.responsiveMaxMs && health.ms <= params.responsiveMaxMs,
      () =>
        `tools/list ${Math.round(list.ms)} ms, /healthz ${Math.round(health.ms)} ms (bound ${params.responsiveMaxMs} ms)`,
    );
    await sleep(params.probeEveryMs);
  }
}

/** Waits out the storm, printing progress every second. */
export async function storm(l: LoadRun, stormStart: number, progress?: (t: string) => void): Promise<void> {
  const stormEnd = stormStart + l.params.seconds * 1_000;
  while (now() < stormEnd && !l.scope.closed) {
    await sleep(1_000);
    const done = l.tasks.filter((t) => t.final !== undefined).length;
    progress?.(
      `storm ${Math.round((now() - stormStart) / 1000)}/${l.params.seconds} s: ${fmtInt(done)} done, ${fmtInt(l.stats.polls)} polls, ${fmtInt(l.stats.notifications)} pushes, rss ${fmtMb(rssOf(l.server.pid))}`,
    );
  }
}

/** Pollers keep going until their task is done, subscribers until they saw theirs complete (bounded). */
export async function drain(l: LoadRun, progress?: (t: string) => void): Promise<void> {
  const drainStart = now();
  while (
    now() - drainStart < 60_000 &&
    (l.tasks.some((t) => t.final === undefined) || l.subs.some((s) => s.completed.size < s.watched.length))
  ) {
    await sleep(250);
    progress?.(`drain: ${fmtInt(l.tasks.filter((t) => t.final === undefined).length)} tasks left`);
  }
  l.stats.drainMs = now() - drainStart;
}
