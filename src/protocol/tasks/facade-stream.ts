// task_status's `stream` argument: the chunks of one of the task's streams (ctx.stream) from an offset, for clients
// without the tasks extension (which cannot follow the stream's resource), bounded per call.
import type { TaskStore } from '../../tasks/store.js';
import type { TaskOwner } from '../../tasks/task.js';
import { streamNameProblem } from '../../wire/stream-uri.js';
import { isJsonObject } from '../../wire/jsonrpc.js';
import type { CallToolResult, JsonValue } from '../types.js';
import { readOwnedStream } from './stream-resources.js';

/** The most chunks, and bytes of text, one task_status call shows of a stream. */
export const STATUS_STREAM_MAX_CHUNKS = 100;
export const STATUS_STREAM_MAX_BYTES = 64 * 1024;

/** The input schema's properties for the stream arguments. */
export const STREAM_ARGS = {
  stream: {
    type: 'string',
    description:
      'Optional: the name of one of the task’s streams of partial results (as its result or a link names it); ' +
      'the chunks from `offset` on are shown with the status.',
  },
  offset: {
    type: 'integer',
    minimum: 0,
    description:
      'With `stream`: the first chunk to show (0-based; pass the nextOffset of the previous call).',
  },
} as const;

/** What is wrong with the stream arguments, or undefined. */
export function streamArgsProblem(stream: unknown, offset: unknown): string | undefined {
  if (stream === undefined)
    return offset === undefined ? undefined : 'offset is only for a stream: give stream too';
  const name = streamNameProblem(stream);
  if (name !== undefined) return `stream: ${name}`;
  if (offset !== undefined && !(Number.isSafeInteger(offset) && (offset as number) >= 0))
    return 'offset must be a whole number of at least 0';
  return undefined;
}

/** `result` (the task's report) with the chunks of stream `name` from `offset` added, text and structured. */
export async function withStreamChunks(
  store: TaskStore,
  owner: TaskOwner,
  now: number,
  result: CallToolResult,
  address: { taskId: string; name: string; offset: number },
): Promise<CallToolResult> {
  const read = await readOwnedStream(store, owner, address, now, {
    chunks: STATUS_STREAM_MAX_CHUNKS,
    bytes: STATUS_STREAM_MAX_BYTES,
  });
  if (read === undefined) return result;
  const { page, nextOffset, ended } = read;
  const state = ended
    ? 'the stream is complete'
    : nextOffset < page.length
      ? `more chunks follow: call again with offset ${nextOffset}`
      : `the task may append more: call again with offset ${nextOffset} for them`;
  const heading =
    page.chunks.length === 0
      ? `Stream "${address.name}": no chunks from offset ${address.offset}; ${state}.`
      : `Stream "${address.name}", chunks ${address.offset} to ${nextOffset - 1} (${state}):`;
  const text = [heading, ...page.chunks.map((c) => c.data)].join('\n');
  const stream: JsonValue = {
    name: address.name,
    offset: address.offset,
    chunks: page.chunks.map((c) => c.data),
    nextOffset,
    length: page.length,
    ended,
  };
  const structured: { [key: string]: JsonValue } = isJsonObject(result.structuredContent)
    ? { ...(result.structuredContent as { [key: string]: JsonValue }) }
    : {};
  structured.stream = stream;
  return { ...result, content: [...result.content, { type: 'text', text }], structuredContent: structured };
}
