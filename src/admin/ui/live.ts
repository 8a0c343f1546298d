// Live updates: GET /admin/api/v1/events read with fetch() and a ReadableStream (EventSource cannot send the
// Authorization header). Reconnects with a growing pause; after a reconnection the views read again.
import { BASE, SIGNED_OUT, authHeaders } from './api.js';
import type { TaskEvent } from './types.js';

export interface LiveHandlers {
  event(event: TaskEvent): void;
  /** Changes may have been missed: read again. */
  resync(): void;
}

export type LiveState = 'connecting' | 'live' | 'off';

const handlers = new Set<LiveHandlers>();
let controller: AbortController | undefined;
let stateListener: (state: LiveState, why?: string) => void = () => undefined;

/** Registers a view's handlers while it is shown; returns the function that removes them. */
export function onLive(h: LiveHandlers): () => void {
  handlers.add(h);
  return () => handlers.delete(h);
}

/**
 * A view read again, at most once a second, whenever a task changes or the live stream resyncs: `load` runs now and
 * then, given whether the view is still shown (a read that comes back after it was left shows nothing). Returns the
 * function that stops it.
 */
export function reloadOnLive(load: (shown: () => boolean) => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const shown = (): boolean => !stopped;
  const later = (): void => {
    timer ??= setTimeout(() => {
      timer = undefined;
      load(shown);
    }, 1000);
  };
  const off = onLive({ event: later, resync: later });
  load(shown);
  return () => {
    stopped = true;
    off();
    if (timer !== undefined) clearTimeout(timer);
  };
}

export function onLiveState(listener: (state: LiveState, why?: string) => void): void {
  stateListener = listener;
}

export function startLive(): void {
  stopLive();
  const abort = new AbortController();
  controller = abort;
  void run(abort.signal);
}

export function stopLive(): void {
  controller?.abort();
  controller = undefined;
}

async function run(signal: AbortSignal): Promise<void> {
  let pause = 1000;
  let first = true;
  while (!signal.aborted) {
    stateListener('connecting');
    try {
      const res = await fetch(`${BASE}/events`, { headers: authHeaders(), signal, cache: 'no-store' });
      if (res.status === 401) {
        window.dispatchEvent(
          new CustomEvent(SIGNED_OUT, { detail: 'the server no longer accepts the token' }),
        );
        return;
      }
      if (res.status === 404) {
        stateListener('off', 'this server has no change feed');
        return;
      }
      if (!res.ok || res.body === null) throw new Error(`events: HTTP ${res.status}`);
      stateListener('live');
      if (!first) for (const h of handlers) h.resync();
      first = false;
      pause = 1000;
      await read(res.body, signal);
    } catch (err) {
      if (signal.aborted) return;
      stateListener('off', err instanceof Error ? err.message : String(err));
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 15_000);
  }
}

async function read(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  while (!signal.aborted) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      dispatch(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
    }
  }
}

/** One SSE message: comments are keep-alives; `event: resync` asks for a new read; `data:` is a TaskEvent. */
function dispatch(message: string): void {
  let name = 'message';
  const data: string[] = [];
  for (const line of message.split('\n')) {
    if (line.startsWith(':')) continue;
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (name === 'resync') {
    for (const h of handlers) h.resync();
    return;
  }
  if (data.length === 0) return;
  const event = JSON.parse(data.join('\n')) as TaskEvent;
  for (const h of handlers) h.event(event);
}
