// The 2025-11-25 method table for requests inside a session, delegating to the shared core.
import type { JsonObject } from '../wire/jsonrpc.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { LOG_LEVELS, type LogLevel } from '../wire/meta-keys.js';
import { ErrorCode } from '../wire/codes.js';
import { invalidParams, methodNotFound, ProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall } from './call.js';
import { callModern, callWithInput } from './modern.js';
import { toLegacyResult, toLegacyTask, type TaskSupport } from './shapes.js';
import type { TaskIndex } from './task-index.js';
import { legacyTaskMethods } from './tasks.js';

export type LegacyMethod = (call: LegacyCall) => Promise<JsonObject>;

const SUPPORT: Record<string, TaskSupport> = {
  never: 'forbidden',
  optional: 'optional',
  required: 'required',
};

function taskSupport(call: LegacyCall, name: unknown): TaskSupport {
  const tool = typeof name === 'string' ? call.server.registry.tools.get(name) : undefined;
  return SUPPORT[tool?.def.task?.support ?? 'never'] ?? 'forbidden';
}

const passThrough =
  (method: string, withInput = false): LegacyMethod =>
  async (call) =>
    toLegacyResult(await (withInput ? callWithInput : callModern)(call, method, call.params));

async function toolsList(call: LegacyCall): Promise<JsonObject> {
  const result = toLegacyResult(await callModern(call, 'tools/list', call.params));
  const tools = Array.isArray(result.tools) ? (result.tools as JsonObject[]) : [];
  result.tools = tools.map((tool) => {
    const support = taskSupport(call, tool.name);
    return support === 'forbidden' ? tool : { ...tool, execution: { taskSupport: support } };
  });
  return result;
}

async function toolsCall(call: LegacyCall, index: TaskIndex): Promise<JsonObject> {
  const support = taskSupport(call, call.params.name);
  const wantsTask = isJsonObject(call.params.task);
  if (wantsTask && support === 'forbidden') {
    throw new ProtocolError(ErrorCode.MethodNotFound, 'This tool does not support task-augmented calls');
  }
  const params = { ...call.params };
  delete params.task;
  let result: JsonObject;
  try {
    result = await callWithInput(call, 'tools/call', params, wantsTask);
  } catch (err) {
    if (
      err instanceof ProtocolError &&
      err.code === ErrorCode.MissingRequiredClientCapability &&
      !wantsTask
    ) {
      throw new ProtocolError(ErrorCode.MethodNotFound, 'This tool must be called as a task (params.task)');
    }
    throw err;
  }
  if (result.resultType !== 'task') return toLegacyResult(result);
  if (typeof result.taskId === 'string') index.add(call.auth, result.taskId);
  return { task: toLegacyTask(result) };
}

async function setLevel(call: LegacyCall): Promise<JsonObject> {
  const level = call.params.level;
  if (!(LOG_LEVELS as readonly unknown[]).includes(level))
    throw invalidParams('Invalid params: unknown level');
  call.session.logLevel = level as LogLevel;
  await call.sessions.update(call.session);
  return {};
}

const ack: LegacyMethod = async () => ({});

export function legacyMethods(index: TaskIndex): Record<string, LegacyMethod> {
  const tasks = legacyTaskMethods({ index });
  return {
    ping: ack,
    'logging/setLevel': setLevel,
    // Updates of subscribed resources are not pushed yet (no GET stream); subscribing is acknowledged.
    'resources/subscribe': ack,
    'resources/unsubscribe': ack,
    'tools/list': toolsList,
    'tools/call': (call) => toolsCall(call, index),
    'prompts/list': passThrough('prompts/list'),
    'prompts/get': passThrough('prompts/get', true),
    'resources/list': passThrough('resources/list'),
    'resources/templates/list': passThrough('resources/templates/list'),
    'resources/read': passThrough('resources/read', true),
    'completion/complete': passThrough('completion/complete'),
    ...tasks,
  };
}

export const unknownMethod = (method: string): ProtocolError => methodNotFound(method);
