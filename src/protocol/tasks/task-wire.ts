// Maps task snapshots to the extension's wire shapes: CreateTaskResult and DetailedTask.
import type { TaskSnapshot } from '../../tasks/task.js';
import type { JsonObject } from '../types.js';

function taskFields(t: TaskSnapshot): JsonObject {
  const out: JsonObject = { taskId: t.id, status: t.status };
  if (t.statusMessage !== undefined) out.statusMessage = t.statusMessage;
  const created = new Date(t.createdAt).toISOString();
  out.createdAt = created;
  out.lastUpdatedAt = t.updatedAt === t.createdAt ? created : new Date(t.updatedAt).toISOString();
  out.ttlMs = t.ttlMs;
  if (t.pollIntervalMs !== undefined) out.pollIntervalMs = t.pollIntervalMs;
  return out;
}

/** The flat `resultType:"task"` answer to tools/call. */
export const toCreateTaskResult = (t: TaskSnapshot): JsonObject => ({ resultType: 'task', ...taskFields(t) });

/** The DetailedTask variant for the task's status (without `resultType`). */
export function toDetailedTask(t: TaskSnapshot): JsonObject {
  const out = taskFields(t);
  if (t.status === 'input_required') out.inputRequests = t.inputRequests;
  else if (t.status === 'completed' && t.result !== undefined) out.result = t.result;
  else if (t.status === 'failed' && t.error !== undefined) out.error = t.error;
  return out;
}
