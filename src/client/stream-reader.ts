// Reading a task's stream (ctx.stream on the server) from an offset, and following it until it ends: each read is a
// resources/read of `durable-mcp://tasks/{taskId}/streams/{name}?offset=N`, so a follower that lost its connection
// goes on from the last offset it was given, and nothing is read twice or skipped.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { META_STREAM, META_STREAM_OFFSET } from '../wire/meta-keys.js';
import { streamUri } from '../wire/stream-uri.js';
import { InvalidResponseError } from './errors.js';
import type { Request } from './request.js';
import { delay } from './wait.js';

/** One chunk: its offset in the stream (0-based) and its text. */
export interface StreamChunk {
  offset: number;
  text: string;
}

/** One read of a stream: its chunks from the offset asked, where to read next, and whether it is over. */
export interface StreamPage {
  chunks: StreamChunk[];
  nextOffset: number;
  /** Chunks the stream held when read. */
  length: number;
  /** The task ended and every chunk is read: nothing more will come. */
  ended: boolean;
}

/** Reads stream `name` of task `taskId` from `offset` (at most one page: follow nextOffset for more). */
export async function readTaskStream(
  request: Request,
  taskId: string,
  name: string,
  offset = 0,
  signal?: AbortSignal,
): Promise<StreamPage> {
  const result = await request('resources/read', { uri: streamUri(taskId, name, offset) }, { signal });
  const meta = isJsonObject(result._meta) ? result._meta[META_STREAM] : undefined;
  if (!isJsonObject(meta) || typeof meta.nextOffset !== 'number' || typeof meta.length !== 'number')
    throw new InvalidResponseError(`resources/read of a task stream without ${META_STREAM}`);
  const contents = Array.isArray(result.contents) ? (result.contents as JsonObject[]) : [];
  const chunks = contents.map((c, i) => ({
    offset:
      isJsonObject(c._meta) && typeof c._meta[META_STREAM_OFFSET] === 'number'
        ? c._meta[META_STREAM_OFFSET]
        : offset + i,
    text: typeof c.text === 'string' ? c.text : '',
  }));
  return { chunks, nextOffset: meta.nextOffset, length: meta.length, ended: meta.ended === true };
}

export interface FollowStreamOptions {
  /** The offset to start at (default 0): the nextOffset a follower before this one reached. */
  from?: number;
  /** Ends the follow (the iteration then returns). */
  signal?: AbortSignal;
  /** The longest wait between reads while nothing new comes (default 1 s). */
  pollMs?: number;
  /**
   * Also wait for the server's `notifications/resources/updated` of the stream (subscriptions/listen), reading as
   * soon as one comes (default true); polling goes on beside it.
   */
  push?: boolean;
}

/**
 * Yields the chunks of stream `name` of task `taskId` from `options.from` on, in order, until the stream is over (its
 * task ended) or the signal aborts. A read that fails ends the iteration with its error: a new follow from the last
 * chunk's offset + 1 goes on where it stopped.
 */
export async function* followTaskStream(
  request: Request,
  taskId: string,
  name: string,
  options: FollowStreamOptions = {},
): AsyncGenerator<StreamChunk, void, undefined> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted === true) stop.abort();
  const pushes = options.push === false ? undefined : listenForUpdates(request, taskId, name, stop.signal);
  let offset = options.from ?? 0;
  try {
    // Ends when the stream is over, the signal aborts, or a read fails (the task gone past its TTL included).
    while (!stop.signal.aborted) {
      const page = await readTaskStream(request, taskId, name, offset, stop.signal);
      for (const chunk of page.chunks) yield chunk;
      offset = page.nextOffset;
      if (page.ended) return;
      if (offset < page.length) continue;
      await (pushes?.next(options.pollMs ?? 1_000) ?? delay(options.pollMs ?? 1_000, stop.signal));
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}

/**
 * A listen for the stream's updates, opened again (after the poll interval) whenever it ends; `next(ms)` resolves at
 * the next update, or after `ms`.
 */
function listenForUpdates(request: Request, taskId: string, name: string, signal: AbortSignal) {
  const uri = streamUri(taskId, name);
  let wake: (() => void) | undefined;
  let updated = false;
  let open = false;
  const onNotification = (m: JsonObject): void => {
    // Chunks appended between the last read and the subscription's start were told of to no one: read again.
    const acknowledged = m.method === 'notifications/subscriptions/acknowledged';
    const mine =
      m.method === 'notifications/resources/updated' && isJsonObject(m.params) && m.params.uri === uri;
    if (!acknowledged && !mine) return;
    updated = true;
    wake?.();
  };
  const listen = (): void => {
    if (open || signal.aborted) return;
    open = true;
    request(
      'subscriptions/listen',
      { notifications: { resourceSubscriptions: [uri] } },
      { signal, onNotification },
    )
      .catch(() => undefined) // polling goes on; the next wait opens it again
      .finally(() => (open = false));
  };
  return {
    async next(ms: number): Promise<void> {
      listen();
      if (updated) {
        updated = false;
        return;
      }
      const woken = new Promise<void>((resolve) => (wake = resolve));
      await Promise.race([woken, delay(ms, signal)]);
      wake = undefined;
      updated = false;
    },
  };
}
