// Tasks over real HTTP for the deployment tests: start one through a URL (a replica or a proxy) and follow it.
import { envelope, mcpHeaders } from './cli.js';
import { post } from './http.js';

type Json = Record<string, unknown>;

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} };

/** One JSON-RPC request as a tasks-aware 2026-07-28 client; the result of its last message (throws on an error). */
export async function rpcResult(url: string, method: string, params: Json, name?: string): Promise<Json> {
  const res = await post(
    url,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope(TASKS) } },
    mcpHeaders(method, name),
    { timeoutMs: 30_000 },
  );
  const last = res.messages[res.messages.length - 1] as Json | undefined;
  if (res.status !== 200 || last?.result === undefined)
    throw new Error(`${method}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
  return last.result as Json;
}

/** Calls a task tool and returns the id of the task it created. */
export async function startTask(url: string, tool: string, args: Json): Promise<string> {
  const created = await rpcResult(url, 'tools/call', { name: tool, arguments: args }, tool);
  if (typeof created.taskId !== 'string')
    throw new Error(`${tool} created no task: ${JSON.stringify(created)}`);
  return created.taskId;
}

/** Polls tasks/get until the task has one of `statuses`, within `timeoutMs`; returns the task. */
export async function waitForTask(
  url: string,
  taskId: string,
  statuses: readonly string[],
  timeoutMs = 30_000,
): Promise<Json> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const task = await rpcResult(url, 'tasks/get', { taskId }, taskId);
    if (statuses.includes(String(task.status))) return task;
    if (Date.now() > end)
      throw new Error(
        `task ${taskId} is ${String(task.status)} after ${timeoutMs} ms, not ${statuses.join('/')}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
