// Names of the 2026-07-28 wire that the tests spell out: the protocol version, the reserved `_meta` keys, the tasks
// extension, the `=?base64?…?=` header sentinel and which params field `Mcp-Name` mirrors, written out independently
// of src/ so that the tests check the server against the spec rather than against itself.

export const PROTOCOL_VERSION = '2026-07-28';
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** Always wraps a value in the `=?base64?…?=` sentinel. */
export const sentinel = (value: string): string =>
  `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;

/** Which params field `Mcp-Name` mirrors for a method. */
export function nameFor(method: string, params: Record<string, unknown>): string | undefined {
  const value =
    method === 'tools/call' || method === 'prompts/get'
      ? params.name
      : method === 'resources/read'
        ? params.uri
        : method.startsWith('tasks/')
          ? params.taskId
          : undefined;
  return typeof value === 'string' ? value : undefined;
}
