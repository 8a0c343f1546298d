// The 2025-11-25 method table for requests inside a session, delegating to the shared core.
import type { JsonObject } from '../wire/jsonrpc.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { LOG_LEVELS, type LogLevel } from '../wire/meta-keys.js';
import { ErrorCode } from '../wire/codes.js';
import { invalidParams, methodNotFound, ProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall } from './call.js';
import { callModern, callWithInput } from './modern.js';
import { toLegacyResult, toLegacyTask, type TaskSupport } from './shapes.js';
import { MAX_SUBSCRIPTIONS } from './sessions.js';
import { legacyTaskMethods } from './tasks.js';

export type LegacyMethod = (call: LegacyCall) => Promise<JsonObject>;

const SUPPORT: Record<string, TaskSupport> = {
  never: 'forbidden',
  optional: 'optional',
  required: 'required',
};

function taskSupport(call: LegacyCall, name: unknown): TaskSupport {
  const tool = typeof name === 'string' ? call.server.toolDefinition(name) : undefined;
  return SUPPORT[tool?.task?.support ?? 'never'] ?? 'forbidden';
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

async function toolsCall(call: LegacyCall): Promise<JsonObject> {
  const support = taskSupport(call, call.params.name);
  const wantsTask = isJsonObject(call.params.task);
  if (wantsTask && support === 'forbidden') {
    throw new ProtocolError(ErrorCode.MethodNotFound, 'This tool does not support task-augmented calls');
  }
  const params = { ...call.params };
  delete params.task;
  const result = await callWithInput(call, 'tools/call', params, wantsTask);
  if (result.resultType !== 'task') return toLegacyResult(result);
  return { task: toLegacyTask(result) };
}

/** Stores what a request changed in the session; a session ended meanwhile fails the request. */
async function saveSession(call: LegacyCall): Promise<void> {
  if (!(await call.ctx.sessions.save(call.session, call.auth, call.ctx.now()))) {
    throw new ProtocolError(ErrorCode.InvalidRequest, 'Session not found');
  }
}

async function setLevel(call: LegacyCall): Promise<JsonObject> {
  const level = call.params.level;
  if (!(LOG_LEVELS as readonly unknown[]).includes(level))
    throw invalidParams('Invalid params: unknown level');
  call.session.logLevel = level as LogLevel;
  await saveSession(call);
  return {};
}

/** Longest URI a session keeps (session state is rewritten on every change). */
const MAX_URI_LENGTH = 1_024;

const readUri = (call: LegacyCall): string => {
  if (typeof call.params.uri !== 'string') throw invalidParams('Invalid params: uri must be a string');
  if (call.params.uri.length > MAX_URI_LENGTH)
    throw invalidParams(`Invalid params: uri longer than ${MAX_URI_LENGTH} characters`);
  return call.params.uri;
};

/** resources/subscribe: the session's GET streams then relay `notifications/resources/updated` for the URI. */
async function subscribe(call: LegacyCall): Promise<JsonObject> {
  // A server without resources has nothing to subscribe to. Any URI may be watched (the server interprets it), but
  // a session keeps few of them, each of bounded length.
  if (!call.server.servesResources()) throw unknownMethod('resources/subscribe');
  const uri = readUri(call);
  const { subscriptions } = call.session;
  if (subscriptions.includes(uri)) return {};
  if (subscriptions.length >= MAX_SUBSCRIPTIONS) {
    throw invalidParams(`Invalid params: at most ${MAX_SUBSCRIPTIONS} resource subscriptions per session`);
  }
  subscriptions.push(uri);
  await saveSession(call);
  call.ctx.subscriptionsChanged(call.session);
  return {};
}

async function unsubscribe(call: LegacyCall): Promise<JsonObject> {
  const uri = readUri(call);
  const before = call.session.subscriptions.length;
  call.session.subscriptions = call.session.subscriptions.filter((u) => u !== uri);
  if (call.session.subscriptions.length === before) return {};
  await saveSession(call);
  call.ctx.subscriptionsChanged(call.session);
  return {};
}

const ack: LegacyMethod = async () => ({});

export function legacyMethods(): Record<string, LegacyMethod> {
  return {
    ping: ack,
    'logging/setLevel': setLevel,
    'resources/subscribe': subscribe,
    'resources/unsubscribe': unsubscribe,
    'tools/list': toolsList,
    'tools/call': toolsCall,
    'prompts/list': passThrough('prompts/list'),
    'prompts/get': passThrough('prompts/get', true),
    'resources/list': passThrough('resources/list'),
    'resources/templates/list': passThrough('resources/templates/list'),
    'resources/read': passThrough('resources/read', true),
    'completion/complete': passThrough('completion/complete'),
    ...legacyTaskMethods(),
  };
}

export const unknownMethod = (method: string): ProtocolError => methodNotFound(method);
