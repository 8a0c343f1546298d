// The URIs of task streams (ctx.stream): `durable-mcp://tasks/{taskId}/streams/{name}`, read from an offset with
// `?offset=N`. Shared by the server (resources/read, subscriptions) and the client library.

export const STREAM_URI_PREFIX = 'durable-mcp://tasks/';

/** A stream's name: 1 to 100 letters, digits, `.`, `_` or `-`, starting with a letter or digit (a URI segment as is). */
export const STREAM_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

const STREAM_URI = /^durable-mcp:\/\/tasks\/([^/?#]+)\/streams\/([^/?#]+)(?:\?offset=(0|[1-9][0-9]{0,14}))?$/;

/** What is wrong with a stream name, or undefined. */
export function streamNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'the name must be a string';
  return STREAM_NAME.test(name)
    ? undefined
    : 'the name must be 1 to 100 letters, digits, ".", "_" or "-", starting with a letter or digit';
}

/** The URI of stream `name` of task `taskId`; with `offset`, the URI that reads it from there. */
export function streamUri(taskId: string, name: string, offset?: number): string {
  const base = `${STREAM_URI_PREFIX}${encodeURIComponent(taskId)}/streams/${name}`;
  return offset === undefined || offset === 0 ? base : `${base}?offset=${offset}`;
}

export interface StreamAddress {
  taskId: string;
  name: string;
  /** The offset asked (0 when the URI has none). */
  offset: number;
  /** The stream's URI without the offset: the resource's own. */
  uri: string;
}

/** The stream a URI names, or undefined when it names none (another scheme, a malformed name or offset). */
export function parseStreamUri(uri: string): StreamAddress | undefined {
  const m = STREAM_URI.exec(uri);
  if (m === null) return undefined;
  let taskId: string;
  try {
    taskId = decodeURIComponent(m[1] as string);
  } catch {
    return undefined;
  }
  const name = m[2] as string;
  if (!STREAM_NAME.test(name)) return undefined;
  const offset = m[3] === undefined ? 0 : Number(m[3]);
  if (!Number.isSafeInteger(offset)) return undefined;
  return { taskId, name, offset, uri: streamUri(taskId, name) };
}
