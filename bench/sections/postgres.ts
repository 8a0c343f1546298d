// PostgreSQL rows: raw pg baselines, task creation and tasks/get on 1 and 3 replicas, each on a fresh schema.
import { PG_POLL_TASKS, PG_REPLICAS } from '../config.js';
import { expectJsonRpcResult, resultOf, send } from '../harness/http.js';
import { rawChild } from '../harness/raw-child.js';
import { cancelTask, createTask } from '../harness/requests.js';
import { createTasks } from '../harness/tasks.js';
import type { RowState, Scenario, Target } from '../types.js';
import { PEER_CALL, PG_CREATION, RAW_PG_INSERT, RAW_PG_NOTIFY, RAW_PG_SELECT } from './names.js';
import { pollTasks, verifyTaskCreated } from './tasks-common.js';

/** Setup of the PostgreSQL polling rows: PG_POLL_TASKS tasks (no worker runs them: they stay `working`). */
async function createPgPollTasks(target: Target): Promise<RowState> {
  return { ids: await createTasks(target, () => createTask('bench_task'), PG_POLL_TASKS, 50), runs: 0 };
}

/**
 * Setup of the finished-task row: the same tasks, each then cancelled (the servers run no worker; a task cancelled
 * before any run ends at once), so that every poll reads a finished task.
 */
async function createFinishedPgTasks(target: Target): Promise<RowState> {
  const state = await createPgPollTasks(target);
  for (const id of state.ids) {
    const res = await send(target, cancelTask(id));
    const problem = expectJsonRpcResult(res.status, res.text);
    if (problem !== undefined) throw new Error(`cancelling the tasks to poll: ${problem}`);
  }
  return state;
}

const polledAs =
  (wanted: 'working' | 'cancelled') =>
  (status: number, text: string): string | undefined => {
    const problem = expectJsonRpcResult(status, text);
    if (problem !== undefined) return problem;
    const task = resultOf(text);
    if (task.status !== wanted || typeof task.taskId !== 'string') {
      return `expected a ${wanted} task: ${text.slice(0, 300)}`;
    }
    return undefined;
  };
const verifyPolledPgTask = polledAs('working');

export const pgCreationRows: Scenario[] = [
  { name: RAW_PG_INSERT, server: 'pg-raw', baseline: null, needs: 'pg', run: rawChild('insert') },
  { name: RAW_PG_NOTIFY, server: 'pg-raw', baseline: RAW_PG_INSERT, needs: 'pg', run: rawChild('notify') },
  {
    name: PG_CREATION,
    server: 'ours-pg1',
    baseline: RAW_PG_INSERT,
    also: [PEER_CALL, RAW_PG_NOTIFY],
    needs: 'pg',
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
  },
];

export const pgReplicaRows: Scenario[] = [
  {
    name: `ours pg task creation, ${PG_REPLICAS} replicas`,
    server: 'ours-pg3',
    baseline: RAW_PG_INSERT,
    also: [PEER_CALL, RAW_PG_NOTIFY],
    needs: 'pg',
    request: () => createTask('bench_task'),
    verify: verifyTaskCreated,
  },
  { name: RAW_PG_SELECT, server: 'pg-raw', baseline: null, needs: 'pg', run: rawChild('select') },
  {
    name: 'ours pg tasks/get, 1 replica',
    server: 'ours-pg1',
    baseline: RAW_PG_SELECT,
    also: [PEER_CALL],
    needs: 'pg',
    setup: createPgPollTasks,
    request: pollTasks,
    verify: verifyPolledPgTask,
  },
  // Finished tasks: answered from the replica's memory while its change feed listens (postgres/finished-tasks.ts).
  {
    name: 'ours pg tasks/get of finished tasks, 1 replica',
    server: 'ours-pg1',
    baseline: RAW_PG_SELECT,
    also: ['ours pg tasks/get, 1 replica'],
    needs: 'pg',
    setup: createFinishedPgTasks,
    request: pollTasks,
    verify: polledAs('cancelled'),
  },
  {
    name: `ours pg tasks/get, ${PG_REPLICAS} replicas`,
    server: 'ours-pg3',
    baseline: RAW_PG_SELECT,
    also: [PEER_CALL],
    needs: 'pg',
    setup: createPgPollTasks,
    request: pollTasks,
    verify: verifyPolledPgTask,
  },
];
