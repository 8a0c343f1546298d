// Memory per open stream: 1,000 subscriptions/listen streams at once, next to a bare node:http SSE stream.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { MEM_STREAMS, MEM_TASKS, MEM_TIMEOUT_MS } from '../config.js';
import { pause } from '../harness/http.js';
import { probeMemory, type MemoryUsage } from '../harness/memory-probe.js';
import { openSockets } from '../harness/proc-stats.js';
import { createInputTask } from '../harness/requests.js';
import { TaskStream } from '../harness/task-stream.js';
import { createTasks, waitForInput } from '../harness/tasks.js';
import type { MemorySample, MemoryScenario, RowState, Target } from '../types.js';
import { MEM_BASE_ROW } from './names.js';

/** Setup of the memory row: MEM_TASKS bench_input tasks, run up to their input and left waiting for good. */
async function createSubscriptionTasks(target: Target): Promise<RowState> {
  const ids = await createTasks(target, createInputTask, MEM_TASKS, 10);
  await waitForInput(target, ids);
  return { ids };
}

/** Opens MEM_STREAMS streams (50 at a time) into `streams`, and waits until each has shown every task waiting. */
async function openStreams(target: Target, ids: string[], streams: TaskStream[]): Promise<void> {
  for (let s = 0; s < MEM_STREAMS; s += 50) {
    const batch = Array.from({ length: Math.min(50, MEM_STREAMS - s) }, (_, k) =>
      TaskStream.open(target.url, ids, `mem-${s + k}`),
    );
    streams.push(...(await Promise.all(batch)));
  }
  await Promise.all(
    streams.map((st) =>
      st.until(() => ids.every((id) => st.status.get(id) === 'input_required'), 'input_required snapshot'),
    ),
  );
}

/** Waits until the server has closed the streams' sockets (its open sockets back to `socketsBefore`). */
async function waitForClosedSockets(target: Target, socketsBefore: number | undefined): Promise<void> {
  for (let waited = 0; ; waited += 20) {
    const sockets = openSockets(target.child.pid);
    if (sockets === undefined || socketsBefore === undefined || sockets <= socketsBefore) break;
    if (waited > MEM_TIMEOUT_MS)
      throw new Error(`${target.key}: ${sockets - socketsBefore} streams still open after closing`);
    await pause(20);
  }
}

/**
 * Memory per open stream: probes the server's memory, opens MEM_STREAMS subscriptions/listen streams (50 at a time,
 * each on its own connection, each watching the row's MEM_TASKS tasks), waits until every stream has shown every
 * task as input_required, probes again, closes the streams and waits until the server has closed their sockets.
 * bytesPerStream = growth of V8 heap used + external memory (both after a full GC) ÷ streams; rssPerStream the
 * same for the resident set (which also counts the garbage collector's headroom and native buffers).
 */
async function memoryPerStream(target: Target, state: RowState | undefined): Promise<MemorySample> {
  const socketsBefore = openSockets(target.child.pid);
  const before = await probeMemory(target);
  const started = performance.now();
  const streams: TaskStream[] = [];
  let after: MemoryUsage;
  try {
    await openStreams(target, state!.ids, streams);
    after = await probeMemory(target);
  } finally {
    for (const st of streams) st.close();
  }
  const seconds = (performance.now() - started) / 1000;
  await waitForClosedSockets(target, socketsBefore);
  const per = (field: 'heapUsed' | 'external' | 'rss') =>
    Math.round((after[field] - before[field]) / MEM_STREAMS);
  return {
    bytesPerStream: Math.round(
      (after.heapUsed + after.external - before.heapUsed - before.external) / MEM_STREAMS,
    ),
    heapPerStream: per('heapUsed'),
    externalPerStream: per('external'),
    rssPerStream: per('rss'),
    streams: MEM_STREAMS,
    ok: MEM_STREAMS,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: Math.round(seconds * 1000) / 1000,
  };
}

// Memory per open stream: MEM_STREAMS streams at once, each watching the same MEM_TASKS tasks.
export const memoryRows: MemoryScenario[] = [
  {
    name: MEM_BASE_ROW,
    server: 'baseline-stream',
    baseline: null,
    kind: 'memory',
    setup: () => ({
      ids: Array.from({ length: MEM_TASKS }, () => `task_${randomBytes(24).toString('base64url')}`),
    }),
    run: memoryPerStream,
  },
  {
    name: `ours subscriptions/listen (${MEM_TASKS} taskIds)`,
    server: 'ours-subs',
    baseline: MEM_BASE_ROW,
    kind: 'memory',
    setup: createSubscriptionTasks,
    run: memoryPerStream,
  },
];
