import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sseComment, sseFrame, SseWriter, type SseTarget } from './sse-writer.js';

/** A response that keeps what is written and holds it unread until `take`. */
class FakeResponse extends EventEmitter implements SseTarget {
  written: string[] = [];
  writableEnded = false;
  destroyed = false;
  writableLength = 0;
  writableNeedDrain = false;
  write(chunk: string | Uint8Array): boolean {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    this.written.push(text);
    this.writableLength += Buffer.byteLength(text);
    return true;
  }
  take(): void {
    this.writableLength = 0;
    this.writableNeedDrain = false;
    this.emit('drain');
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('sseFrame', () => {
  it('writes the fields given, in order, and a blank line', () => {
    expect(sseFrame({ id: '7', event: 'message', data: '{"a":1}' })).toBe(
      'id: 7\nevent: message\ndata: {"a":1}\n\n',
    );
    expect(sseFrame({ data: '{}', event: 'resync' })).toBe('event: resync\ndata: {}\n\n');
    expect(sseFrame({ id: 'e-1', data: '' })).toBe('id: e-1\ndata:\n\n');
    expect(sseFrame({ retry: 1499.6 })).toBe('retry: 1500\n\n');
  });

  it('sends each line of the data as a data line', () => {
    expect(sseFrame({ data: 'one\n\ntwo' })).toBe('data: one\ndata:\ndata: two\n\n');
  });

  it('writes comments', () => {
    expect(sseComment('keep-alive')).toBe(': keep-alive\n\n');
  });
});

describe('SseWriter', () => {
  it('writes while the response is open, nothing after', () => {
    const res = new FakeResponse();
    const writer = new SseWriter(res);
    writer.write('data: 1\n\n');
    res.writableEnded = true;
    writer.write('data: 2\n\n');
    expect(res.written).toEqual(['data: 1\n\n']);
    expect(writer.open).toBe(false);
  });

  it('sends a keep-alive comment each interval until stopped', () => {
    vi.useFakeTimers();
    const res = new FakeResponse();
    const writer = new SseWriter(res);
    writer.keepAlive(1_000);
    vi.advanceTimersByTime(2_500);
    writer.stop();
    vi.advanceTimersByTime(5_000);
    expect(res.written).toEqual([': keep-alive\n\n', ': keep-alive\n\n']);
    writer.keepAlive(0);
    vi.advanceTimersByTime(5_000);
    expect(res.written).toHaveLength(2);
  });

  it('shares one timer between the writers of one interval, and drops a writer whose response ended', () => {
    vi.useFakeTimers();
    const timers = vi.getTimerCount();
    const [a, b] = [new FakeResponse(), new FakeResponse()];
    const [first, second] = [new SseWriter(a), new SseWriter(b)];
    first.keepAlive(1_000);
    second.keepAlive(1_000);
    expect(vi.getTimerCount()).toBe(timers + 1);
    vi.advanceTimersByTime(1_000);
    expect([a.written, b.written]).toEqual([[': keep-alive\n\n'], [': keep-alive\n\n']]);
    b.writableEnded = true;
    vi.advanceTimersByTime(1_000);
    expect([a.written.length, b.written.length]).toEqual([2, 1]);
    first.stop();
    expect(vi.getTimerCount()).toBe(timers);
    second.stop();
    vi.advanceTimersByTime(5_000);
    expect([a.written.length, b.written.length]).toEqual([2, 1]);
  });

  it('says when the reader leaves more than the bound unread, keep-alives included', () => {
    vi.useFakeTimers();
    const res = new FakeResponse();
    const onOverflow = vi.fn();
    const writer = new SseWriter(res, { maxUnreadBytes: 20, onOverflow });
    writer.write('data: 0123456789\n\n');
    expect(onOverflow).not.toHaveBeenCalled();
    writer.keepAlive(1_000);
    vi.advanceTimersByTime(1_000);
    expect(onOverflow).toHaveBeenCalledOnce();
    expect(writer.overflowing).toBe(true);
    writer.stop();
    res.take();
    expect(writer.overflowing).toBe(false);
  });

  it('waits for the reader to take what waits, or for the response to close', async () => {
    const res = new FakeResponse();
    const writer = new SseWriter(res);
    await writer.writable();
    res.writableNeedDrain = true;
    let drained = false;
    const waiting = writer.writable().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    res.take();
    await waiting;
    res.writableNeedDrain = true;
    const closing = writer.writable();
    res.emit('close');
    await closing;
  });

  it('keeps no listener once a wait is over, however many times the stream waited', async () => {
    const res = new FakeResponse();
    const writer = new SseWriter(res);
    const before = [res.listenerCount('drain'), res.listenerCount('close')];
    for (let i = 0; i < 50; i++) {
      res.writableNeedDrain = true;
      const waiting = writer.writable();
      expect(res.listenerCount('drain')).toBe(before[0]! + 1);
      res.take();
      await waiting;
    }
    expect([res.listenerCount('drain'), res.listenerCount('close')]).toEqual(before);
  });
});
