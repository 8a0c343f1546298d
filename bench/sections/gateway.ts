// The gateway rows: an SDK v1 upstream's quick tool called straight and through `durable-mcp gateway` (synchronous),
// and task creation through the gateway next to serve's own, both without a worker.
import { GATEWAY_CPU_MAX_RATIO, GATEWAY_SYNC_MIN_RATIO } from '../config.js';
import { callEcho, callEchoLegacy, createTask } from '../harness/requests.js';
import type { Scenario } from '../types.js';
import { GATEWAY_NO_WORKER, NO_WORKER_CREATION, UPSTREAM_CALL } from './names.js';
import { verifyEchoResult } from './stateless.js';
import { verifyTaskCreated } from './tasks-common.js';

/** The arguments of every creation row: what the upstream's echo requires (serve's bench_task takes any object). */
const ECHO_ARGS = { text: 'hi' };

export const gatewayRows: Scenario[] = [
  // The upstream's own endpoint, as a 2025-11-25 client calls it: the reference of the synchronous gateway row.
  {
    name: UPSTREAM_CALL,
    server: 'upstream-v1',
    baseline: null,
    request: callEchoLegacy,
    verify: verifyEchoResult,
  },
  // The same call as a 2026-07-28 client sends it to the gateway, which makes it upstream within the request (its
  // own client session to the same upstream process).
  {
    name: 'gateway tools/call echo, synchronous',
    server: 'gateway-sync',
    baseline: UPSTREAM_CALL,
    targets: [{ vs: UPSTREAM_CALL, min: GATEWAY_SYNC_MIN_RATIO }],
    request: callEcho,
    verify: verifyEchoResult,
  },
  // Creation alone (no worker, tasks stay queued): serve's own tool, then the gateway's, whose CPU per task it bounds.
  {
    name: NO_WORKER_CREATION,
    server: 'ours-noworker',
    baseline: null,
    request: () => createTask('bench_task', ECHO_ARGS),
    verify: verifyTaskCreated,
  },
  {
    name: GATEWAY_NO_WORKER,
    server: 'gateway-noworker',
    baseline: NO_WORKER_CREATION,
    targets: [{ vs: NO_WORKER_CREATION, maxCpu: GATEWAY_CPU_MAX_RATIO }],
    request: () => createTask('echo', ECHO_ARGS),
    verify: verifyTaskCreated,
  },
];
