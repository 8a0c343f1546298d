// Task creation with an idempotency key in every request, next to its control: the same requests without a key.
import { expectJsonRpcResult, parseAnswer, resultOf, send } from '../harness/http.js';
import { createKeyedTask, newIdempotencyKey, PAD_KEY, randomUUID } from '../harness/requests.js';
import { drainWorker } from '../harness/tasks.js';
import type { Scenario, Target } from '../types.js';
import {
  creationTarget,
  CREATION,
  PEER_CALL,
  PG_CREATION,
  PG_REBUILT,
  RAW_INSERT,
  RAW_PG_INSERT,
  REBUILT,
} from './names.js';
import { verifyTaskCreated } from './tasks-common.js';

/**
 * The keyed creation rows' pre-flight: the request creates a task (its key the pre-flight key, see
 * createKeyedTask); sent again it answers the same task, and with other arguments under that key -32602.
 */
async function verifyKeyedTask(status: number, text: string, target: Target) {
  const problem = await verifyTaskCreated(status, text, target);
  if (problem !== undefined) return problem;
  const { taskId } = resultOf(text);
  const again = await send(target, createKeyedTask('bench_task'));
  const miss = expectJsonRpcResult(again.status, again.text);
  if (miss !== undefined) return `the same key again: ${miss}`;
  if (resultOf(again.text).taskId !== taskId) {
    return `the same key again created another task: ${again.text.slice(0, 300)}`;
  }
  const other = await send(target, createKeyedTask('bench_task', { other: true }));
  if (parseAnswer(other.text).error?.code !== -32602) {
    return `the same key with other arguments: expected error -32602, got ${other.text.slice(0, 300)}`;
  }
  return undefined;
}

/** The control: the creation row's request rebuilt for each request around a fresh value under PAD_KEY, no key. */
const rebuiltRequest = () => createKeyedTask('bench_task', {}, newIdempotencyKey, PAD_KEY);

export const keyedSqliteRows: Scenario[] = [
  {
    name: REBUILT,
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    also: [CREATION, PEER_CALL],
    request: rebuiltRequest,
    verify: verifyTaskCreated,
    settle: drainWorker,
  },
  // A fresh idempotency key in every request, made as the client library makes them (the creation checks it and
  // keeps it in a unique index); on the same server, right after its control in every round.
  {
    name: 'ours task creation with an idempotency key',
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    also: [REBUILT, CREATION, PEER_CALL],
    targets: [creationTarget(REBUILT)],
    request: () => createKeyedTask('bench_task'),
    verify: verifyKeyedTask,
    settle: drainWorker,
  },
  // The same with keys in no order (UUIDv4), as a caller that makes its own might send: each lands on another page
  // of the key index. For information (no target).
  {
    name: 'ours task creation with a random idempotency key',
    server: 'ours-tasks',
    baseline: RAW_INSERT,
    also: [REBUILT, PEER_CALL],
    request: () => createKeyedTask('bench_task', {}, randomUUID),
    verify: verifyKeyedTask,
    settle: drainWorker,
  },
];

export const keyedPgRows: Scenario[] = [
  {
    name: PG_REBUILT,
    server: 'ours-pg1',
    baseline: RAW_PG_INSERT,
    also: [PG_CREATION, PEER_CALL],
    needs: 'pg',
    request: rebuiltRequest,
    verify: verifyTaskCreated,
  },
  {
    name: 'ours pg task creation with an idempotency key, 1 replica',
    server: 'ours-pg1',
    baseline: RAW_PG_INSERT,
    also: [PG_REBUILT, PG_CREATION, PEER_CALL],
    targets: [creationTarget(PG_REBUILT)],
    needs: 'pg',
    request: () => createKeyedTask('bench_task'),
    verify: verifyKeyedTask,
  },
];
