// The task streams (ctx.stream) as resources: `durable-mcp://tasks/{taskId}/streams/{name}`, read from an offset with
// `?offset=N`, and followed through subscriptions/listen's resourceSubscriptions. Only the task's owner sees them:
// anyone else's, like an unknown or expired task's, is a resource that does not exist.
import type { StreamPage, TaskStore } from '../../tasks/store.js';
import { isTerminal, ownerOf, type TaskOwner } from '../../tasks/task.js';
import { META_STREAM, META_STREAM_OFFSET } from '../../wire/meta-keys.js';
import { parseStreamUri, STREAM_URI_PREFIX, type StreamAddress } from '../../wire/stream-uri.js';
import type { JsonObject } from '../../wire/jsonrpc.js';
import { resourceNotFound } from '../resources.js';
import type { ResourceProvider } from '../resource-provider.js';
import { followStreams } from './stream-follow.js';

/** The most chunks, and bytes of text, one read answers (the first chunk comes whatever its size). */
export const STREAM_READ_MAX_CHUNKS = 1_000;
export const STREAM_READ_MAX_BYTES = 1024 * 1024;

/** What a caller reads of a stream, after its task was found theirs; undefined when it is not. */
export async function readOwnedStream(
  store: TaskStore,
  owner: TaskOwner,
  address: Pick<StreamAddress, 'taskId' | 'name' | 'offset'>,
  now: number,
  max = { chunks: STREAM_READ_MAX_CHUNKS, bytes: STREAM_READ_MAX_BYTES },
): Promise<{ page: StreamPage; nextOffset: number; ended: boolean } | undefined> {
  const streams = store.streams;
  if (streams === undefined) return undefined;
  const task = await store.get(address.taskId, owner, now);
  if (typeof task === 'string') return undefined;
  // The status before the chunks: a task that had ended then has all its chunks kept (appends need a live run).
  const page = await streams.read(address.taskId, address.name, address.offset, max.chunks, max.bytes);
  const nextOffset = address.offset + page.chunks.length;
  return { page, nextOffset, ended: isTerminal(task.status) && nextOffset >= page.length };
}

export function createStreamResources(store: TaskStore, now: () => number): ResourceProvider {
  return {
    owns: (uri) => uri.startsWith(STREAM_URI_PREFIX),

    async read(uri, scope) {
      const address = parseStreamUri(uri);
      if (address === undefined) throw resourceNotFound(uri);
      const read = await readOwnedStream(store, ownerOf(scope.auth), address, now());
      if (read === undefined) throw resourceNotFound(uri);
      const { page, nextOffset, ended } = read;
      const contents: JsonObject[] = page.chunks.map((c) => ({
        uri: address.uri,
        mimeType: 'text/plain',
        text: c.data,
        _meta: { [META_STREAM_OFFSET]: c.seq },
      }));
      return {
        resultType: 'complete',
        contents,
        // The stream grows while its task runs, and is the caller's own.
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { [META_STREAM]: { nextOffset, length: page.length, ended } },
      };
    },

    subscribe: (uris, scope, send) => followStreams(store, now, uris, ownerOf(scope.auth), send),

    templates: [
      {
        uriTemplate: `${STREAM_URI_PREFIX}{taskId}/streams/{name}`,
        name: 'task-stream',
        title: 'Task stream',
        description:
          'Partial results a task appends while it runs (ctx.stream), one content per chunk; ' +
          'add ?offset=N to read from chunk N.',
        mimeType: 'text/plain',
      },
    ],
  };
}
