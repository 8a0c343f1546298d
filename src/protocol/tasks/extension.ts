// The io.modelcontextprotocol/tasks extension: task creation on tools/call, tasks/get, tasks/update, tasks/cancel.
import { InputResponsesV2Schema } from '@modelcontextprotocol/ext-tasks/core/v2';
import { isTaskIdShape, newTaskId } from '../../tasks/ids.js';
import type { TaskStore } from '../../tasks/store.js';
import type { JsonMap, LookupMiss, TaskOwner } from '../../tasks/task.js';
import { hasExtension } from '../../wire/envelope.js';
import { isJsonObject } from '../../wire/jsonrpc.js';
import { TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { invalidParams, missingCapability, type ProtocolError } from '../../wire/protocol-error.js';
import { runRound, type RoundDeps } from '../run-round.js';
import type { RequestScope } from '../scope.js';
import type { ServerExtension } from '../server.js';
import type { ToolCall } from '../tools.js';
import type { JsonObject } from '../types.js';
import { toCreateTaskResult, toDetailedTask } from './task-wire.js';

export interface TasksExtensionOptions {
  store: TaskStore;
  /** TTL for tools that declare none; null for unlimited. Default one hour. */
  defaultTtlMs?: number | null;
  /** Suggested poll interval for tools that declare none. Default 1000 ms. */
  defaultPollIntervalMs?: number;
  now?: () => number;
}

const ACK = { resultType: 'complete' };
const REQUIRED = { extensions: { [TASKS_EXTENSION]: {} } };

function requireExtension(scope: RequestScope): void {
  if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
    throw missingCapability(
      `${scope.method} needs the ${TASKS_EXTENSION} extension in this request's capabilities`,
      REQUIRED,
    );
  }
}

function readTaskId(params: JsonObject): string {
  const id = params.taskId;
  if (typeof id !== 'string') throw invalidParams('Invalid params: taskId must be a string');
  if (!isTaskIdShape(id)) throw invalidParams('invalid task id');
  return id;
}

const missError = (miss: LookupMiss): ProtocolError =>
  miss === 'expired' ? invalidParams('Task has expired') : invalidParams('Task not found');

const ownerOf = (scope: RequestScope): TaskOwner => ({
  tenant: scope.auth.tenant,
  principal: scope.auth.principal,
});

export function createTasksExtension(options: TasksExtensionOptions): ServerExtension {
  const { store } = options;
  const now = options.now ?? Date.now;

  async function interceptToolCall(call: ToolCall, params: JsonObject, scope: RequestScope, deps: RoundDeps) {
    const policy = call.tool.def.task;
    if (policy === undefined || policy.support === 'never') return undefined;
    if (!hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)) {
      if (policy.support === 'optional') return undefined;
      throw missingCapability(
        `Tool ${call.tool.def.name} runs only as a task: declare the ${TASKS_EXTENSION} extension`,
        REQUIRED,
      );
    }
    let answers: Record<string, JsonMap> = {};
    if (policy.prepare !== undefined) {
      const prepare = policy.prepare;
      const round = await runRound(deps, params, scope, call.tool.def.name, call.args, async (ctx, r) => {
        await prepare(call.args, ctx);
        return r.answers;
      });
      if (round.kind === 'input_required') return round.result;
      answers = round.value;
    }
    const snapshot = await store.create({
      id: newTaskId(),
      owner: ownerOf(scope),
      tool: call.tool.def.name,
      args: call.args,
      createdAt: now(),
      ttlMs:
        policy.ttlMs === undefined
          ? options.defaultTtlMs === undefined
            ? 3_600_000
            : options.defaultTtlMs
          : policy.ttlMs,
      pollIntervalMs: policy.pollIntervalMs ?? options.defaultPollIntervalMs ?? 1_000,
      statusMessage: 'The task is now in progress.',
      replayAfterCrash: policy.replayAfterCrash ?? true,
      clientCapabilities: scope.envelope.clientCapabilities,
      answers,
    });
    return toCreateTaskResult(snapshot);
  }

  return {
    id: TASKS_EXTENSION,
    capability: {},
    interceptToolCall,
    methods: {
      'tasks/get': async (params, scope) => {
        requireExtension(scope);
        const snapshot = await store.get(readTaskId(params), ownerOf(scope), now());
        if (typeof snapshot === 'string') throw missError(snapshot);
        return { resultType: 'complete', ...toDetailedTask(snapshot) };
      },
      'tasks/update': async (params, scope) => {
        requireExtension(scope);
        const id = readTaskId(params);
        const responses = params.inputResponses;
        if (!isJsonObject(responses)) throw invalidParams('Invalid params: inputResponses must be an object');
        const snapshot = await store.get(id, ownerOf(scope), now());
        if (typeof snapshot === 'string') throw missError(snapshot);
        // Only outstanding keys count; unknown, answered and superseded keys are ignored.
        const outstanding: Record<string, JsonMap> = {};
        for (const [key, value] of Object.entries(responses)) {
          if (snapshot.inputRequests[key] === undefined) continue;
          if (!InputResponsesV2Schema.safeParse({ [key]: value }).success) {
            throw invalidParams(`Invalid params: malformed answer for input key "${key}"`);
          }
          outstanding[key] = value as JsonMap;
        }
        if (Object.keys(outstanding).length > 0) {
          const answered = await store.answer(id, ownerOf(scope), outstanding, now());
          if (!answered.ok) throw missError(answered.miss);
        }
        return { ...ACK };
      },
      'tasks/cancel': async (params, scope) => {
        requireExtension(scope);
        const cancelled = await store.requestCancel(readTaskId(params), ownerOf(scope), now());
        if (!cancelled.ok) throw missError(cancelled.miss);
        return { ...ACK };
      },
    },
  };
}
