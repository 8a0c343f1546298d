// Task rows on SQLite: raw better-sqlite3 baselines, task creation (worker running, parked) and tasks/get polling.
import { POLL_TASKS } from '../config.js';
import { expectJsonRpcResult, resultOf, send } from '../harness/http.js';
import { rawChild } from '../harness/raw-child.js';
import { createTask } from '../harness/requests.js';
import { drainWorker } from '../harness/tasks.js';
import type { RowState, Scenario, Target } from '../types.js';
import { CREATION, ECHO, PEER_CALL, RAW_INSERT, READ_TARGETS } from './names.js';
import { pollTasks, verifyTaskCreated } from './tasks-common.js';

/** Setup of the polling row: POLL_TASKS tasks, created 50 at a time, all run to completion by the worker. */
async function createPollTasks(target: Target): Promise<RowState> {
  const ids: string[] = [];
  let next = 0;
  const createOne = async () => {
    while (next++ < POLL_TASKS) {
      const res = await send(target, createTask('bench_task'));
      const problem = expectJsonRpcResult(res.status, res.text);
      if (problem !== undefined) throw new Error(`creating the tasks to poll: ${problem}`);
      ids.push(resultOf(res.text).taskId!);
    }
  };
  await Promise.all(Array.from({ length: 50 }, createOne));
  await drainWorker(target);
  return { ids, runs: 0 };
}

function verifyPolledTask(status: number, text: string): string | undefined {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  if (resultOf(text).status !== 'completed') return `expected a completed task: ${text.slice(0, 300)}`;
  return undefined;
}

/** One row INSERT per autocommit transaction (one fsync each), back to back on one thread. */
export const rawInsertRow: Scenario = {
  name: RAW_INSERT,
  server: 'sqlite',
  baseline: null,
  run: rawChild('insert'),
};

/** tools/call of a task-only tool: one durable task per request; the worker runs each (claim + finish). */
export const creationRow: Scenario = {
  name: CREATION,
  server: 'ours-tasks',
  baseline: RAW_INSERT,
  also: [PEER_CALL],
  request: () => createTask('bench_task'),
  verify: verifyTaskCreated,
  settle: drainWorker,
};

/** The same creation path with the worker out of the way: what group-committed creation alone costs. */
export const parkedRow: Scenario = {
  name: 'ours task creation, worker parked',
  server: 'ours-park',
  baseline: RAW_INSERT,
  also: [PEER_CALL],
  request: () => createTask('bench_park'),
  verify: verifyTaskCreated,
};

export const readRows: Scenario[] = [
  { name: 'raw better-sqlite3 point select', server: 'sqlite', baseline: null, run: rawChild('select') },
  // The peer has no tasks/get: its closest request, a synchronous tools/call answered at once, is the comparison.
  {
    name: 'ours tasks/get polling',
    server: 'ours-poll',
    baseline: ECHO,
    also: [PEER_CALL],
    targets: [READ_TARGETS[0]!, { vs: PEER_CALL, min: 5 }],
    setup: createPollTasks,
    request: pollTasks,
    verify: verifyPolledTask,
  },
];
