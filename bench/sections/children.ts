// Child tasks (ctx.callTool): a task whose handler calls one child task (bench_parent → bench_step), from its
// tools/call to the tasks/get that first reads it completed, next to a task that runs one step (bench_step) timed the
// same way on the same server in the same rounds. The ratio is what a child's round trip adds: its creation, its own
// run and the parent's wake-up (the child's ending makes the parent due in the same write, not a poll).
import { Agent } from 'node:http';
import { latencySample, nsToMs } from '../stats.js';
import { getTask, mcpTaskCall } from '../harness/requests.js';
import { post } from '../harness/http.js';
import type { LatencyScenario, LatencySample, TargetView } from '../types.js';

export const STEP_ROUND_TRIP = 'ours task with one step, tools/call → completed (sequential)';
export const CHILD_ROUND_TRIP = 'ours task calling one child task, tools/call → completed (sequential)';

/** At most this long per task before the run fails (a wake-up that never comes). */
const TASK_BOUND_MS = 10_000;
/** At most this many seconds of one run: hundreds of samples already. */
const MAX_SECONDS = 2;

/** The taskId of a tools/call answer. */
function taskIdOf(text: string): string {
  const m = /"taskId":"([^"]+)"/.exec(text);
  if (m === null) throw new Error(`tools/call: not a task: ${text.slice(0, 300)}`);
  return m[1]!;
}

/**
 * Tasks of `tool`, one at a time for `seconds`: each timed from its tools/call to the tasks/get that first reads
 * it completed (polling one request at a time over one keep-alive connection).
 */
async function roundTrips(target: TargetView, tool: string, seconds: number): Promise<LatencySample> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  try {
    const started = process.hrtime.bigint();
    const end = started + BigInt(Math.round(Math.min(seconds, MAX_SECONDS) * 1e9));
    for (let now = started; now < end; now = process.hrtime.bigint()) {
      const created = await post(agent, target.url, mcpTaskCall(tool));
      if (created.status !== 200) throw new Error(`tools/call ${tool}: HTTP ${created.status}`);
      const get = getTask(taskIdOf(created.text));
      const bound = Date.now() + TASK_BOUND_MS;
      for (;;) {
        const res = await post(agent, target.url, get);
        if (res.status !== 200) throw new Error(`tasks/get: HTTP ${res.status}`);
        if (res.text.includes('"status":"completed"')) break;
        if (/"status":"(failed|cancelled)"/.test(res.text))
          throw new Error(`${tool}: ${res.text.slice(0, 300)}`);
        if (Date.now() > bound) throw new Error(`${tool}: not completed within ${TASK_BOUND_MS} ms`);
      }
      latencies.push(nsToMs(process.hrtime.bigint() - now));
    }
    return latencySample(latencies, nsToMs(process.hrtime.bigint() - started) / 1000);
  } finally {
    agent.destroy();
  }
}

export const childRows: LatencyScenario[] = [
  {
    name: STEP_ROUND_TRIP,
    server: 'ours-push',
    baseline: null,
    kind: 'latency',
    run: (target, _state, seconds) => roundTrips(target, 'bench_step', seconds),
  },
  {
    name: CHILD_ROUND_TRIP,
    server: 'ours-push',
    baseline: STEP_ROUND_TRIP,
    kind: 'latency',
    target: { text: 'p50 at most 3× a task with one step (its round trip)', p50Ratio: 3 },
    run: (target, _state, seconds) => roundTrips(target, 'bench_parent', seconds),
  },
];
