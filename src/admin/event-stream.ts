// `GET /admin/api/v1/events`: an operator's server-sent events: `data: {"taskId","task"}` for each change of a task
// within its tenants, `data: {"taskId","removed":true}` when one it was shown is purged, `event: resync` when
// changes may have gone unheard, a comment every keep-alive interval. The stream ends after `maxStreamMs` (the client
// opens a new one, its credentials checked again), or as soon as the client leaves more than `maxBufferedBytes`
// unread (it reconnects and reads the list again): a slow reader never makes the server buffer without bound.
import type { ServerResponse } from 'node:http';
import type { AdminScope } from '../tasks/admin.js';
import type { TaskEventHub } from './events.js';
import { sseComment, sseFrame, SseWriter } from '../pacing/sse-writer.js';

export interface EventStreamOptions {
  /** A comment line this often (ms), so proxies and the browser see the stream alive. */
  keepAliveMs: number;
  /** The stream ends after this long (ms). */
  maxStreamMs: number;
  /** What a client may leave unread (bytes) before its stream is ended. */
  maxBufferedBytes: number;
}

export const DEFAULT_EVENT_STREAM: EventStreamOptions = {
  keepAliveMs: 15_000,
  maxStreamMs: 600_000,
  maxBufferedBytes: 256 * 1024,
};

const OPEN = sseComment('open');
const RESYNC = sseFrame({ event: 'resync', data: '{}' });

/** Serves one stream until it ends; `onEnd` is called once then. */
export function openEventStream(
  hub: TaskEventHub,
  scope: AdminScope,
  res: ServerResponse,
  options: EventStreamOptions,
  onEnd: () => void,
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  // What the response and its socket hold unsent past the bound: the client reads too slowly (or is gone without a
  // word).
  const writer = new SseWriter(res, { maxUnreadBytes: options.maxBufferedBytes, onOverflow: () => close() });
  const write = (frame: string | Uint8Array): void => {
    if (!closed) writer.write(frame);
  };
  const stop = hub.open({ scope, send: (_event, frame) => write(frame), resync: () => write(RESYNC) });
  writer.keepAlive(options.keepAliveMs);
  const lifetime = setTimeout(() => close(), options.maxStreamMs);
  lifetime.unref();
  function close(): void {
    if (closed) return;
    closed = true;
    stop();
    writer.stop();
    clearTimeout(lifetime);
    // A reader too slow to take what is queued is cut rather than waited for.
    if (writer.overflowing) res.destroy();
    else res.end();
    onEnd();
  }
  // The response closes when the client goes away (a request's own 'close' only says its body was read).
  res.once('close', close);
  // The first bytes right away: the client knows the stream is open before any task changes.
  write(OPEN);
}
