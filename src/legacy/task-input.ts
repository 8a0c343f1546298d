// Mid-task input on the legacy wire: each outstanding input request of a task goes to the client as a real
// server→client request whose id names the task and the input key, so the answer, POSTed to any replica, is
// written into that task's input records (the modern tasks/update), whoever is waiting for it.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import type { LegacyCall } from './call.js';
import { callModern } from './modern.js';

export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const PREFIX = 'task-input:';

export const inputRequestId = (taskId: string, key: string): string =>
  `${PREFIX}${Buffer.from(JSON.stringify([taskId, key])).toString('base64url')}`;

/** The task and input key a server→client request id names, or undefined for other ids. */
export function parseInputRequestId(id: unknown): { taskId: string; key: string } | undefined {
  if (typeof id !== 'string' || !id.startsWith(PREFIX)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString());
    if (Array.isArray(value) && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { taskId: value[0], key: value[1] };
    }
  } catch {
    // not one of ours
  }
  return undefined;
}

/** Sends the requests for the keys not asked yet on this stream; returns how many went out. */
export function askForInput(
  call: LegacyCall,
  taskId: string,
  requests: JsonObject,
  asked: Set<string>,
): number {
  let sent = 0;
  for (const [key, request] of Object.entries(requests)) {
    if (asked.has(key) || !isJsonObject(request) || typeof request.method !== 'string') continue;
    asked.add(key);
    const params = isJsonObject(request.params) ? { ...request.params } : {};
    params._meta = { ...(isJsonObject(params._meta) ? params._meta : {}), [RELATED_TASK]: { taskId } };
    call.sendRequest(inputRequestId(taskId, key), request.method, params);
    sent++;
  }
  return sent;
}

/** Writes one answer into the task's input records (owner-scoped: only the caller's own tasks). */
export async function answerInput(
  call: LegacyCall,
  target: { taskId: string; key: string },
  result: JsonObject,
): Promise<void> {
  await callModern(
    call,
    'tasks/update',
    { taskId: target.taskId, inputResponses: { [target.key]: result } },
    true,
  );
}
