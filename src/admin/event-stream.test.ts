import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { openEventStream } from './event-stream.js';
import type { EventListener, TaskEventHub } from './events.js';

/** A response whose client reads nothing: everything written stays buffered. */
function unreadResponse() {
  const res = new EventEmitter() as EventEmitter & {
    writableLength: number;
    written: Buffer[];
    ended: boolean;
    destroyed: boolean;
  };
  Object.assign(res, { writableLength: 0, written: [], ended: false, destroyed: false });
  Object.assign(res, {
    writeHead: () => res,
    write: (chunk: Buffer) => {
      res.written.push(chunk);
      res.writableLength += chunk.length;
      return false;
    },
    end: () => {
      res.ended = true;
      res.emit('close');
    },
    destroy: () => {
      res.destroyed = true;
      res.emit('close');
    },
  });
  return res;
}

function hub() {
  const open = new Set<EventListener>();
  const events: TaskEventHub = {
    open(listener) {
      open.add(listener);
      return () => open.delete(listener);
    },
  };
  return { events, open };
}

describe('an operator event stream', () => {
  it('is cut, not buffered without bound, when its client reads nothing', () => {
    const h = hub();
    const res = unreadResponse();
    let ends = 0;
    const options = { keepAliveMs: 60_000, maxStreamMs: 60_000, maxBufferedBytes: 4_096 };
    openEventStream(
      h.events,
      { tenants: 'all' },
      res as unknown as ServerResponse,
      options,
      () => (ends += 1),
    );
    const [listener] = h.open;
    const frame = Buffer.from(`data: ${'x'.repeat(1_000)}\n\n`);
    for (let i = 0; i < 100 && !res.destroyed; i += 1) listener?.send({ taskId: 't', removed: true }, frame);
    expect(res.destroyed).toBe(true);
    expect(res.writableLength).toBeLessThanOrEqual(4_096 + frame.length);
    expect(h.open.size).toBe(0);
    expect(ends).toBe(1);
    // Nothing more is written once it is cut.
    const before = res.written.length;
    listener?.send({ taskId: 't', removed: true }, frame);
    expect(res.written.length).toBe(before);
  });
});
