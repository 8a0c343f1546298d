// Legacy (2025-11-25) tasks over the shared task service: tasks/get, tasks/result, tasks/list, tasks/cancel.
import { ErrorCode } from '../wire/codes.js';
import { toDetailedTask } from '../protocol/tasks/task-wire.js';
import type { JsonObject } from '../wire/jsonrpc.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { invalidParams, ProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall } from './call.js';
import { callModern } from './modern.js';
import { toLegacyError } from './capabilities.js';
import { isTerminal, ownerOf, type TaskSnapshot } from '../tasks/task.js';
import { toLegacyResult, toLegacyTask } from './shapes.js';
import { RELATED_TASK, TaskInputAsker } from './task-input.js';
import { pollDelay, waitForTask } from './task-wait.js';
import { waitEventId, WaitPaused } from './result-resume.js';

const readTaskId = (params: JsonObject): string => {
  if (typeof params.taskId !== 'string') throw invalidParams('Invalid params: taskId must be a string');
  return params.taskId;
};

/** The owner-scoped modern tasks/get: someone else's task fails exactly like a missing one. */
const getModern = (call: LegacyCall, taskId: string): Promise<JsonObject> =>
  callModern(call, 'tasks/get', { taskId }, true);

/** The terminal task's payload as tasks/result answers it: the result, or its error thrown. */
function payloadOf(task: JsonObject, taskId: string): JsonObject {
  const related = { [RELATED_TASK]: { taskId } };
  if (task.status === 'completed' && isJsonObject(task.result)) {
    const result = toLegacyResult(task.result);
    result._meta = { ...(isJsonObject(result._meta) ? result._meta : {}), ...related };
    return result;
  }
  if (task.status === 'failed') {
    const error = isJsonObject(task.error) ? task.error : {};
    const code = typeof error.code === 'number' ? error.code : ErrorCode.InternalError;
    const message = typeof error.message === 'string' ? error.message : 'Task failed';
    throw toLegacyError(new ProtocolError(code, message, error.data));
  }
  throw new ProtocolError(ErrorCode.InternalError, 'Task was cancelled', { taskId });
}

/**
 * tasks/result: blocks until the task is terminal. Outstanding input is asked on the response stream as
 * server→client requests; their answers land in the task (on whichever replica receives them) and wake this wait.
 * No request is held for the task's whole life: on an event stream, each window of `resultWaitMs` ends by closing
 * the stream for the client to resume from its last event id (result-resume.ts); a client that takes no event
 * stream is told to call again.
 */
async function taskResult(call: LegacyCall): Promise<JsonObject> {
  const taskId = readTaskId(call.params);
  const { now } = call.ctx;
  const deadline = now() + call.ctx.resultWaitMs;
  const waiter = waitForTask(call, taskId);
  const asker = new TaskInputAsker(call, taskId, new Set(call.resumable?.asked ?? []), () => waiter.wake());
  const mark = (): void =>
    call.resumable?.mark(waitEventId({ taskId, requestId: call.id, asked: [...asker.asked] }));
  try {
    // The caller's own task, or the same "not found" as tasks/get, before the stream is offered for resumption.
    let task = await getModern(call, taskId);
    mark();
    for (let look = 0; look < 100_000; look++) {
      if (isTerminal(task.status)) return payloadOf(task, taskId);
      if (task.status === 'input_required' && isJsonObject(task.inputRequests)) {
        if (asker.ask(task.inputRequests) > 0) mark();
      }
      if (call.signal.aborted) throw new ProtocolError(ErrorCode.InternalError, 'Request aborted');
      const left = deadline - now();
      if (left <= 0) break;
      await waiter.next(Math.min(left, pollDelay(call, task.pollIntervalMs)));
      task = await getModern(call, taskId);
    }
  } finally {
    waiter.stop();
    asker.stop();
  }
  if (call.resumable !== undefined) throw new WaitPaused();
  throw new ProtocolError(
    ErrorCode.InternalError,
    `Task ${taskId} is not finished yet: call tasks/result again`,
    { taskId, retry: true },
  );
}

/** Cursor of tasks/list: the position after the last task of the page, opaque to the client. */
const encodeCursor = (t: TaskSnapshot): string =>
  Buffer.from(JSON.stringify([t.createdAt, t.id])).toString('base64url');

function decodeCursor(cursor: unknown): { createdAt: number; id: string } | undefined {
  if (cursor === undefined) return undefined;
  try {
    const value: unknown =
      typeof cursor === 'string' ? JSON.parse(Buffer.from(cursor, 'base64url').toString()) : 0;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string'
    ) {
      return { createdAt: value[0] as number, id: value[1] };
    }
  } catch {
    // falls through to the error below
  }
  throw invalidParams('Invalid params: unknown cursor');
}

async function taskList(call: LegacyCall): Promise<JsonObject> {
  const { store, pageSize, now } = call.ctx;
  const after = decodeCursor(call.params.cursor);
  if (store?.listOwned === undefined) return { tasks: [] };
  const owner = ownerOf(call.auth);
  const page = after === undefined ? { limit: pageSize + 1 } : { after, limit: pageSize + 1 };
  const found = await store.listOwned(owner, page, now());
  const shown = found.slice(0, pageSize);
  const result: JsonObject = { tasks: shown.map((t) => toLegacyTask(toDetailedTask(t))) };
  const last = shown[shown.length - 1];
  if (found.length > pageSize && last !== undefined) result.nextCursor = encodeCursor(last);
  return result;
}

/** tasks/cancel: the legacy answer is the Task, so a running task gets a bounded wait to settle. */
async function taskCancel(call: LegacyCall): Promise<JsonObject> {
  const taskId = readTaskId(call.params);
  const before = await getModern(call, taskId);
  if (isTerminal(before.status)) {
    throw invalidParams(`Cannot cancel task: already in terminal status '${String(before.status)}'`);
  }
  await callModern(call, 'tasks/cancel', { taskId }, true);
  const { now } = call.ctx;
  const deadline = now() + call.ctx.cancelWaitMs;
  const waiter = waitForTask(call, taskId);
  try {
    for (let look = 0; look < 10_000; look++) {
      const task = await getModern(call, taskId);
      const left = deadline - now();
      if (isTerminal(task.status) || left <= 0 || call.signal.aborted) return toLegacyTask(task);
      await waiter.next(Math.min(left, pollDelay(call, task.pollIntervalMs)));
    }
  } finally {
    waiter.stop();
  }
  return toLegacyTask(await getModern(call, taskId));
}

export function legacyTaskMethods() {
  return {
    'tasks/get': async (call: LegacyCall) => toLegacyTask(await getModern(call, readTaskId(call.params))),
    'tasks/result': taskResult,
    'tasks/list': taskList,
    'tasks/cancel': taskCancel,
  };
}
