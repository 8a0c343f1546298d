// The MCP requests the rows send, in autocannon's options shape: JSON-RPC over the 2026-07-28 Streamable HTTP.
import { randomUUID } from 'node:crypto';
// Keys as the client library makes them (`npm run bench` builds dist/ first).
import { newIdempotencyKey } from '../../dist/src/client/idempotency-key.js';
import { PROTOCOL_VERSION } from '../config.js';
import type { LoadRequest } from '../types.js';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

type Meta = Record<string, unknown>;

const META: Meta = {
  'io.modelcontextprotocol/protocolVersion': PROTOCOL_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

const TASKS_META: Meta = {
  ...META,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
};

// bench_input asks for an elicitation, which needs the client capability.
const INPUT_META: Meta = {
  ...META,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
};

export function mcpRequest(
  method: string,
  params: Record<string, unknown> = {},
  name?: string,
  meta: Meta = META,
): LoadRequest & { body: string } {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  if (name !== undefined) headers['mcp-name'] = name;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } });
  return { method: 'POST', path: '/mcp', headers, body };
}

export const callEcho = (): LoadRequest =>
  mcpRequest('tools/call', { name: 'echo', arguments: { text: 'hi' } }, 'echo');
export const listTools = (): LoadRequest => mcpRequest('tools/list');
export const discover = (): LoadRequest => mcpRequest('server/discover');

/** The protocol version of the requests sent straight to a 2025-11-25 server (the gateway's upstream). */
export const LEGACY_PROTOCOL_VERSION = '2025-11-25';

/**
 * tools/call of echo as a 2025-11-25 client sends it to a stateless Streamable HTTP server: the JSON-RPC request
 * with the version header, no session (a stateless server issues none) and no `_meta`.
 */
export const callEchoLegacy = (): LoadRequest => ({
  method: 'POST',
  path: '/mcp',
  headers: {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': LEGACY_PROTOCOL_VERSION,
  },
  body: JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hi' } },
  }),
});
export const createTask = (tool: string, args: Record<string, unknown> = {}): LoadRequest =>
  mcpRequest('tools/call', { name: tool, arguments: args }, tool, TASKS_META);
export const getTask = (taskId: string): LoadRequest =>
  mcpRequest('tasks/get', { taskId }, taskId, TASKS_META);
export const cancelTask = (taskId: string): LoadRequest =>
  mcpRequest('tasks/cancel', { taskId }, taskId, TASKS_META);

const IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';
/** The key the pre-flight checks send (and send again). */
const PREFLIGHT_KEY = 'bench-preflight-key';
/** The `_meta` key of the keyed rows' controls' padding (a prefix of no one's: servers ignore keys they do not know). */
export const PAD_KEY = 'bench.durable-mcp/pad';

/**
 * The creation row's request with an idempotency key, a fresh one in every request autocannon sends (its
 * `setupRequest` rebuilds the body around the key), made by `newKey`: by default as `durable-mcp/client` makes
 * them (UUIDv7, time-ordered); `randomUUID` for keys in no order. Sent as it is (the pre-flight check), the key is
 * PREFLIGHT_KEY.
 */
export function createKeyedTask(
  tool: string,
  args: Record<string, unknown> = {},
  newKey: () => string = newIdempotencyKey,
  metaKey: string = IDEMPOTENCY_KEY,
): LoadRequest {
  const req = mcpRequest('tools/call', { name: tool, arguments: args }, tool, {
    ...TASKS_META,
    [metaKey]: PREFLIGHT_KEY,
  });
  const [head, tail] = req.body.split(JSON.stringify(PREFLIGHT_KEY));
  const setupRequest = (r: LoadRequest): LoadRequest => ({
    ...r,
    body: `${head}${JSON.stringify(newKey())}${tail}`,
  });
  return { ...req, requests: [{ setupRequest }] };
}

export { newIdempotencyKey, randomUUID };

/** tools/call of a task tool without arguments, as a client with the tasks extension. */
export const mcpTaskCall = (tool: string): LoadRequest =>
  mcpRequest('tools/call', { name: tool, arguments: {} }, tool, TASKS_META);

/** tools/call of bench_sleep: a task that sleeps until `until` (epoch ms). */
export const createSleepTask = (until: number): LoadRequest =>
  mcpRequest('tools/call', { name: 'bench_sleep', arguments: { until } }, 'bench_sleep', TASKS_META);

export const createInputTask = (): LoadRequest =>
  mcpRequest('tools/call', { name: 'bench_input', arguments: {} }, 'bench_input', INPUT_META);

export const answerTask = (taskId: string): LoadRequest =>
  mcpRequest(
    'tasks/update',
    { taskId, inputResponses: { go: { action: 'accept', content: {} } } },
    taskId,
    INPUT_META,
  );

export const listenTasks = (taskIds: string[], id: string): LoadRequest & { body: string } => ({
  ...mcpRequest('subscriptions/listen', { notifications: { taskIds } }, undefined, INPUT_META),
  body: JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications: { taskIds }, _meta: INPUT_META },
  }),
});

/**
 * The operators' list page: one tool's newest `limit` tasks (GET /admin/api/v1/tasks). The servers of these rows run
 * in anonymous mode with `--dev-operator`: the anonymous caller is an operator of every tenant, no token is sent.
 */
export const listToolTasks = (tool: string, limit: number): LoadRequest => ({
  method: 'GET',
  path: `/admin/api/v1/tasks?tool=${encodeURIComponent(tool)}&limit=${limit}`,
  headers: { accept: 'application/json' },
});
