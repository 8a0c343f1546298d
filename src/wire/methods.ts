// The JSON-RPC method names of the 2026-07-28 wire, written once: the server's method tables, the metrics' labels
// and the tests take them from here.

/** The core protocol's methods a server answers. */
export const CORE_METHODS = [
  'server/discover',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'completion/complete',
  'subscriptions/listen',
] as const;

/** The methods of the `io.modelcontextprotocol/tasks` extension. */
export const TASK_METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const;

/** Methods of earlier revisions that 2026-07-28 removed (answered -32601, never routed). */
export const REMOVED_METHODS = [
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
] as const;

export type CoreMethod = (typeof CORE_METHODS)[number];
export type TaskMethod = (typeof TASK_METHODS)[number];

/** Every method this server may answer. */
export const SERVED_METHODS: readonly string[] = [...CORE_METHODS, ...TASK_METHODS];
