// The traffic of a fault-injection section: tasks with steps and one input, created, polled and answered; creation
// probes while the store is away; the recovery round after each fault; tools/list and /healthz probes.
import { httpGet, type RpcAnswer } from '../harness/rpc.js';
import { now, sleep } from '../harness/time.js';
import type { FaultRun, HandleRec } from './fault-run.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

export async function createTask(f: FaultRun, label: string): Promise<HandleRec | undefined> {
  const sentIn = f.phase;
  const r = await f.call('tools/call', {
    name: 'chaos_job',
    arguments: { cid: label, steps: 3, inputs: 1, ms: f.rng.int(50, 200) },
  });
  const kind = f.record('tools/call', r, sentIn);
  if (kind === 'ok' && r.result?.resultType === 'task') return f.adopt(r.result.taskId as string, sentIn);
  if (kind === 'ok')
    f.inv.fail(
      'clear-errors',
      `tools/call answered without a task: ${JSON.stringify(r.result).slice(0, 200)}`,
    );
  return undefined;
}

/** Polls a task to its end, answering its input request. */
export async function follow(f: FaultRun, rec: HandleRec): Promise<void> {
  const deadline = now() + 120_000;
  while (f.running && now() < deadline && !f.scope.closed) {
    await sleep(100);
    await f.ensureServer();
    const sentIn = f.phase;
    const r = await f.call('tasks/get', { taskId: rec.taskId });
    if (f.record('tasks/get', r, sentIn) !== 'ok') continue;
    const t = r.result as RpcAnswer;
    if (TERMINAL.has(t.status as string)) {
      rec.final = t;
      return;
    }
    if (t.status === 'input_required') {
      const inputResponses: Record<string, unknown> = {};
      for (const key of Object.keys(t.inputRequests ?? {}))
        inputResponses[key] = { action: 'accept', content: { v: 'ok' } };
      const u = await f.call('tasks/update', { taskId: rec.taskId, inputResponses });
      f.record('tasks/update', u, sentIn);
    }
  }
}

/** A handle returned while the store was away: a task like the others, followed to its end. */
export function followNew(f: FaultRun, taskId: string, sentIn: string): void {
  const rec = f.adopt(taskId, sentIn);
  f.tasks.push(rec);
  void follow(f, rec);
}

/** One client: creates a task, follows it to its end, again, while the section runs. */
export async function trafficLoop(f: FaultRun): Promise<void> {
  while (f.running && !f.scope.closed) {
    if (!f.creating) {
      await sleep(50);
      continue;
    }
    const rec = await createTask(f, `f${f.serial++}`);
    if (rec === undefined) {
      await sleep(150);
      continue;
    }
    f.tasks.push(rec);
    await follow(f, rec);
  }
}

/** After a fault: a full create → get → update round must succeed again within the bound. */
export async function recovery(f: FaultRun, label: string): Promise<void> {
  f.phase = 'recovery';
  const t0 = now();
  while (now() - t0 < f.params.recoveryBoundMs) {
    await f.ensureServer();
    const rec = await createTask(f, `${label}-probe`);
    if (rec !== undefined) {
      const g = await f.call('tasks/get', { taskId: rec.taskId });
      const u = await f.call('tasks/update', { taskId: rec.taskId, inputResponses: {} });
      if (g.result !== undefined && u.result !== undefined) {
        f.stats.recoveryMs.push(now() - t0);
        f.inv.ok('recovers');
        f.tasks.push(rec);
        void follow(f, rec);
        f.phase = 'baseline';
        return;
      }
    }
    await sleep(100);
  }
  f.inv.fail(
    'recovers',
    `${label}: no successful create/get/update within ${f.params.recoveryBoundMs} ms after the store came back`,
  );
  f.phase = 'baseline';
}

/**
 * Probes sent while the store is away, one every 250 ms (at most two outstanding) until `untilMs`: a creation
 * must fail cleanly (or, if it succeeds, be committed). Returns the outstanding probes without waiting for them,
 * so that a probe hanging on the fault cannot stretch the fault itself.
 */
export async function outageProbes(
  f: FaultRun,
  label: string,
  untilMs: number,
): Promise<{ done: Promise<unknown> }> {
  const outstanding = new Set<Promise<void>>();
  while (now() < untilMs) {
    if (outstanding.size < 2) {
      const sentIn = f.phase;
      const p = f
        .call('tools/call', { name: 'chaos_job', arguments: { cid: `${label}-x`, steps: 1 } })
        .then((r) => {
          const kind = f.record('tools/call', r, sentIn);
          if (kind === 'ok' && r.result?.resultType === 'task')
            followNew(f, r.result.taskId as string, sentIn);
        });
      outstanding.add(p);
      void p.finally(() => outstanding.delete(p));
    }
    await sleep(Math.min(250, Math.max(0, untilMs - now())));
  }
  return { done: Promise.all([...outstanding]) };
}

/** tools/list and /healthz, every 100 ms, independent of the store: they must answer, and in time. */
export async function probeLoop(f: FaultRun, postgres: boolean, probing: () => boolean): Promise<void> {
  const { inv, params, stats } = f;
  while (probing() && !f.scope.closed) {
    const sentIn = f.phase;
    await f.ensureServer();
    const gen = f.generation;
    const [list, health] = await Promise.all([
      f.call('tools/list', {}),
      httpGet(f.url, '/healthz', { timeoutMs: 60_000, agent: f.agent }),
    ]);
    if (sentIn !== 'baseline' && sentIn !== 'recovery') {
      stats.listMsDuringFault?.push(list.ms);
      for (const [what, r] of [
        ['tools/list', list],
        ['/healthz', health],
      ] as const) {
        inv.expect(
          'bounded-wait',
          r.netError !== undefined || r.ms <= params.waitBoundMs,
          () => `${what} sent during ${sentIn} was answered after ${Math.round(r.ms)} ms`,
        );
      }
    }
    if (list.netError !== undefined)
      f.netFailures.push({ r: list, why: `tools/list during ${sentIn}: ${list.netError}` });
    else
      inv.expect(
        'responsive',
        list.result !== undefined,
        () => `tools/list during ${sentIn}: ${list.error?.message}`,
      );
    if (health.netError !== undefined) {
      f.netFailures.push({ r: { gen }, why: `/healthz during ${sentIn}: ${health.netError}` });
    } else
      inv.expect('responsive', health.status === 200, () => `/healthz during ${sentIn}: ${health.status}`);
    if (postgres) {
      inv.expect(
        'responsive',
        list.ms < 5_000,
        () =>
          `tools/list took ${Math.round(list.ms)} ms during ${sentIn} (bound 5 s: it does not touch the store)`,
      );
    }
    await sleep(100);
  }
}
