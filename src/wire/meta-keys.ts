// Reserved `_meta` keys and identifiers of the 2026-07-28 revision and the tasks extension.

export const LATEST_PROTOCOL_VERSION = '2026-07-28';
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [LATEST_PROTOCOL_VERSION];

export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * This server's own `_meta` keys (a prefix no one else reserves). On tools/call, the caller's idempotency key: a
 * string of 1 to 255 characters, none of them a control character (`idempotency-key.ts`); other servers ignore it.
 */
export const META_IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';
/**
 * On tools/call, the caller's priority for the task among its own tasks (a whole number from -100 to 100), honoured
 * only by a server that allows it (`allowCallerPriority`, `serve --allow-caller-priority`); others ignore it.
 */
export const META_PRIORITY = 'dev.durable-mcp/priority';
/**
 * On the CreateTaskResult of a tool with a debounce window (TaskPolicy.debounce): `{ joined, replaced }`, whether the
 * call joined a task an earlier call created, and whether it gave that pending task its arguments.
 */
export const META_DEBOUNCE = 'dev.durable-mcp/debounce';
/** On a tool error result: the reference under which the error is kept and logged. */
export const META_ERROR_REF = 'dev.durable-mcp/errorRef';
/** On a result handed back to a client without the tasks extension: the task that goes on ({taskId, status}). */
export const META_BACKGROUND_TASK = 'dev.durable-mcp/backgroundTask';
/** On each content of a task stream's resources/read result: the chunk's offset in its stream (0-based). */
export const META_STREAM_OFFSET = 'dev.durable-mcp/streamOffset';
/**
 * On a task stream's resources/read result: `{ nextOffset, length, ended }`: the offset to read from next, the chunks
 * the stream holds, and whether it is over (its task ended and nothing is left to read past nextOffset).
 */
export const META_STREAM = 'dev.durable-mcp/stream';
/** On tasks/get of a child task (ctx.callTool): the id of the task whose run started it. */
export const META_PARENT_TASK = 'dev.durable-mcp/parentTask';
/**
 * On tasks/get of a task whose runs started child tasks (ctx.callTool): its first 100 children in creation order,
 * each `{ taskId, tool, status }`.
 */
export const META_CHILD_TASKS = 'dev.durable-mcp/childTasks';

export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
