// `GET /admin/api/v1/events`: an operator's server-sent events: `data: {"taskId","task"}` for each change of a task
// within its tenants, `data: {"taskId","removed":true}` when one it was shown is purged, `event: resync` when
// changes may have gone unheard, a comment every keep-alive interval. The stream ends after `maxStreamMs` (the client
// opens a new one, its credentials checked again) or when the client is too slow to read it.
import type { ServerResponse } from 'node:http';
import type { AdminScope } from '../tasks/admin.js';
import type { TaskEventHub } from './events.js';

export interface EventStreamOptions {
  /** A comment line this often (ms), so proxies and the browser see the stream alive. */
  keepAliveMs: number;
  /** The stream ends after this long (ms). */
  maxStreamMs: number;
}

export const DEFAULT_EVENT_STREAM: EventStreamOptions = { keepAliveMs: 15_000, maxStreamMs: 600_000 };

/** What a client may leave unread before its stream is ended (it reconnects and reads the list again). */
const MAX_BUFFERED_BYTES = 1 << 20;

export function openEventStream(
  hub: TaskEventHub,
  scope: AdminScope,
  res: ServerResponse,
  options: EventStreamOptions,
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
  });
  let closed = false;
  const write = (text: string): void => {
    if (closed) return;
    res.write(text);
    if (res.writableLength > MAX_BUFFERED_BYTES) close();
  };
  const stop = hub.open({
    scope,
    send: (event) => write(`data: ${JSON.stringify(event)}\n\n`),
    resync: () => write('event: resync\ndata: {}\n\n'),
  });
  const keepAlive = setInterval(() => write(': keep-alive\n\n'), options.keepAliveMs);
  const lifetime = setTimeout(() => close(), options.maxStreamMs);
  keepAlive.unref();
  lifetime.unref();
  function close(): void {
    if (closed) return;
    closed = true;
    stop();
    clearInterval(keepAlive);
    clearTimeout(lifetime);
    res.end();
  }
  // The response closes when the client goes away (a request's own 'close' only says its body was read).
  res.once('close', close);
  // The first bytes right away: the client knows the stream is open before any task changes.
  write(': open\n\n');
}
