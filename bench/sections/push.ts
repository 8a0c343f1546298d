// Latency rows of tasks/get and push: one poll at a time, and commit → subscriber event with 100 subscribers, on
// SQLite and on PostgreSQL (1 and 3 replicas).
import { GET_MAX_SECONDS, GET_TASKS, PG_REPLICAS, PUSH_STREAMS } from '../config.js';
import { createInputTask, getTask } from '../harness/requests.js';
import { timeSequentialGets } from '../harness/sequential-gets.js';
import { createTasks, waitForInput } from '../harness/tasks.js';
import type { LatencyScenario, LatencyTargetSpec, RowState, Target, TargetView } from '../types.js';
import { GET_RTT, PG_GET_RTT, PUSH_ROW } from './names.js';
import { pushLatency } from './push-latency.js';

/**
 * The push rows' target: p99 below one tasks/get round trip at PUSH_STREAMS subscribers, that is below the p99
 * round trip of a client polling the same server during the same rounds (the poller).
 */
const PUSH_TARGET: LatencyTargetSpec = {
  text: `p99 below one tasks/get round trip at ${PUSH_STREAMS} subscribers (p99 ÷ p99 of the poller in the same rounds)`,
  p99Ratio: 1,
  vs: 'poll',
};

/** Setup of the tasks/get round-trip row: GET_TASKS bench_input tasks, left waiting for input for good. */
async function createGetTasks(target: Target): Promise<RowState> {
  const ids = await createTasks(target, createInputTask, GET_TASKS, 10);
  await waitForInput(target, ids);
  return { ids };
}

/**
 * tasks/get of input_required tasks, one request at a time over one keep-alive connection, for `seconds` (at most
 * GET_MAX_SECONDS: that already gives thousands of samples per run).
 */
function sequentialGets(target: TargetView, state: RowState | undefined, runSeconds: number) {
  const requests = state!.ids.map(getTask);
  return timeSequentialGets(
    target,
    Math.min(runSeconds, GET_MAX_SECONDS),
    (i) => requests[i % requests.length]!,
  );
}

export const pushRows: LatencyScenario[] = [
  // One poll of an unfinished task, one request at a time: what a client that polls pays per look.
  {
    name: GET_RTT,
    server: 'ours-push',
    baseline: null,
    kind: 'latency',
    setup: createGetTasks,
    run: sequentialGets,
  },
  // From the commit of a transition (server clock, the push server) to the moment a subscriber reads its event.
  {
    name: PUSH_ROW,
    server: 'ours-push',
    baseline: GET_RTT,
    kind: 'latency',
    target: PUSH_TARGET,
    run: pushLatency,
  },
];

// Latency on PostgreSQL: the same two measurements on the push server over PostgreSQL.
export const pgPushRows: LatencyScenario[] = [
  {
    name: PG_GET_RTT,
    server: 'ours-pg-push1',
    baseline: null,
    kind: 'latency',
    needs: 'pg',
    setup: createGetTasks,
    run: sequentialGets,
  },
  {
    name: `ours pg push latency, ${PUSH_STREAMS} SSE subscribers, 1 replica`,
    server: 'ours-pg-push1',
    baseline: PG_GET_RTT,
    kind: 'latency',
    needs: 'pg',
    target: PUSH_TARGET,
    run: pushLatency,
  },
  {
    name: `ours pg push latency, ${PUSH_STREAMS} SSE subscribers, ${PG_REPLICAS} replicas`,
    server: 'ours-pg-push3',
    baseline: PG_GET_RTT,
    kind: 'latency',
    needs: 'pg',
    run: pushLatency,
  },
];
