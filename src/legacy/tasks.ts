// Legacy (2025-11-25) tasks over the shared task service: tasks/get, tasks/result, tasks/list, tasks/cancel.
import type { JsonObject } from '../wire/jsonrpc.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { invalidParams, ProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall } from './call.js';
import { callModern } from './modern.js';
import { isTerminal, toLegacyResult, toLegacyTask } from './shapes.js';
import type { TaskIndex } from './task-index.js';

export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const readTaskId = (params: JsonObject): string => {
  if (typeof params.taskId !== 'string') throw invalidParams('Invalid params: taskId must be a string');
  return params.taskId;
};

const getModern = (call: LegacyCall, taskId: string): Promise<JsonObject> =>
  callModern(call, 'tasks/get', { taskId }, true);

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

export interface LegacyTaskOptions {
  index: TaskIndex;
  /** How long tasks/result waits for a terminal state before answering "retry" (default 60 s). */
  resultWaitMs?: number;
  pageSize?: number;
}

export function legacyTaskMethods(options: LegacyTaskOptions) {
  const waitMs = options.resultWaitMs ?? 60_000;
  const pageSize = options.pageSize ?? 50;

  /** Answers the task's outstanding input with real requests on this stream, into tasks/update. */
  async function deliverInput(call: LegacyCall, taskId: string, requests: JsonObject): Promise<void> {
    const answers: JsonObject = {};
    await Promise.all(
      Object.entries(requests).map(async ([key, request]) => {
        if (!isJsonObject(request) || typeof request.method !== 'string') return;
        const params = isJsonObject(request.params) ? { ...request.params } : {};
        params._meta = { ...(isJsonObject(params._meta) ? params._meta : {}), [RELATED_TASK]: { taskId } };
        answers[key] = await call.ask(request.method, params);
      }),
    );
    await callModern(call, 'tasks/update', { taskId, inputResponses: answers }, true);
  }

  return {
    'tasks/get': async (call: LegacyCall) => toLegacyTask(await getModern(call, readTaskId(call.params))),

    'tasks/result': async (call: LegacyCall) => {
      const taskId = readTaskId(call.params);
      const deadline = Date.now() + waitMs;
      for (;;) {
        const task = await getModern(call, taskId);
        const related = { [RELATED_TASK]: { taskId } };
        if (task.status === 'completed' && isJsonObject(task.result)) {
          const result = toLegacyResult(task.result);
          result._meta = { ...(isJsonObject(result._meta) ? result._meta : {}), ...related };
          return result;
        }
        if (task.status === 'failed') {
          const error = isJsonObject(task.error) ? task.error : {};
          const code = typeof error.code === 'number' ? error.code : -32603;
          throw new ProtocolError(code, typeof error.message === 'string' ? error.message : 'Task failed');
        }
        if (task.status === 'cancelled') throw new ProtocolError(-32603, 'Task was cancelled');
        if (task.status === 'input_required' && isJsonObject(task.inputRequests)) {
          await deliverInput(call, taskId, task.inputRequests);
          continue;
        }
        if (call.signal.aborted) throw new ProtocolError(-32603, 'Request aborted');
        if (Date.now() >= deadline) {
          throw new ProtocolError(
            -32603,
            `Task ${taskId} is still ${String(task.status)}: call tasks/result again`,
          );
        }
        const poll = typeof task.pollIntervalMs === 'number' ? task.pollIntervalMs : 500;
        await sleep(Math.min(1_000, Math.max(100, poll)), call.signal);
      }
    },

    'tasks/list': async (call: LegacyCall) => {
      const cursor = call.params.cursor;
      let offset = 0;
      if (cursor !== undefined) {
        const n = typeof cursor === 'string' ? Number(Buffer.from(cursor, 'base64url').toString()) : NaN;
        if (!Number.isSafeInteger(n) || n < 0) throw invalidParams('Invalid params: unknown cursor');
        offset = n;
      }
      const ids = options.index.list(call.auth);
      const tasks: JsonObject[] = [];
      let next = offset;
      while (next < ids.length && tasks.length < pageSize) {
        const id = ids[next++] as string;
        try {
          tasks.push(toLegacyTask(await getModern(call, id)));
        } catch {
          options.index.forget(call.auth, id); // expired or purged
        }
      }
      const result: JsonObject = { tasks };
      if (next < ids.length) result.nextCursor = Buffer.from(String(next)).toString('base64url');
      return result;
    },

    'tasks/cancel': async (call: LegacyCall) => {
      const taskId = readTaskId(call.params);
      const before = await getModern(call, taskId);
      if (isTerminal(before.status)) {
        throw invalidParams(`Cannot cancel task: already in terminal status '${String(before.status)}'`);
      }
      await callModern(call, 'tasks/cancel', { taskId }, true);
      return toLegacyTask(await getModern(call, taskId));
    },
  };
}
