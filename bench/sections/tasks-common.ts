// Checks and requests the task rows of both stores share: a created task, and tasks/get of a rotating slice.
import { POLL_ROTATION } from '../config.js';
import { expectJsonRpcResult, resultOf, sendTo } from '../harness/http.js';
import { getTask } from '../harness/requests.js';
import type { LoadRequest, RowState, Target } from '../types.js';

/** tools/call answered with a task (resultType "task") that tasks/get then finds. */
export async function verifyTaskCreated(status: number, text: string, target: Target) {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const created = resultOf(text);
  if (created.resultType !== 'task' || typeof created.taskId !== 'string') {
    return `expected a CreateTaskResult (resultType "task" with a taskId): ${text.slice(0, 300)}`;
  }
  // Every replica (one for most servers) must find the task.
  for (const url of target.urls) {
    const got = await sendTo(url, getTask(created.taskId));
    const miss = expectJsonRpcResult(got.status, got.text);
    if (miss !== undefined) return `tasks/get ${created.taskId} on ${url}: ${miss}`;
    if (resultOf(got.text).taskId !== created.taskId) return `tasks/get answered another task: ${got.text}`;
  }
  return undefined;
}

/**
 * tasks/get of POLL_ROTATION tasks in turn (autocannon's `requests`), a different slice of the created tasks in
 * every run. autocannon builds each entry for every connection inside the measured time, so the slice is small.
 */
export function pollTasks(_target: Target, state: RowState | undefined): LoadRequest {
  const { ids } = state!;
  const runs = state!.runs ?? 0;
  state!.runs = runs + 1;
  const first = (runs * POLL_ROTATION) % ids.length;
  const requests = Array.from({ length: POLL_ROTATION }, (_, i) => getTask(ids[(first + i) % ids.length]!));
  return { ...requests[0]!, requests };
}
