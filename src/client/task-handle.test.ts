import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../wire/codes.js';
import type { JsonObject } from '../wire/jsonrpc.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { StreamEndedError } from './errors.js';
import { TaskHandle, type TaskClient } from './task-handle.js';

const working = (extra: JsonObject = {}): JsonObject => ({ taskId: 't1', status: 'working', ...extra });
const completed: JsonObject = { taskId: 't1', status: 'completed', result: { content: [] } };
const notReady = (): ProtocolError =>
  new ProtocolError(ErrorCode.InvalidRequest, 'not ready', undefined, 503);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What one listen request of the fake server does: acknowledge, push, and end (resolve or throw) or stay open. */
type Stream = (s: {
  ack(taskIds?: string[]): void;
  push(task: JsonObject): void;
  open: Promise<never>;
}) => Promise<JsonObject>;

/** A client of a scripted server: listen request `n` runs `streams[n]` (the last one again after), tasks/get `get`. */
function scripted(streams: Stream[], get: (n: number) => JsonObject) {
  const events: Array<{ event: 'listen' | 'end' | 'get'; at: number }> = [];
  const note = (event: 'listen' | 'end' | 'get'): void => void events.push({ event, at: Date.now() });
  let listens = 0;
  let gets = 0;
  const client: TaskClient = {
    onInput: undefined,
    journalUpdate: () => undefined,
    async request(method, _params, options = {}) {
      if (method === 'tasks/get') {
        note('get');
        return get(++gets);
      }
      note('listen');
      const stream = streams[Math.min(listens++, streams.length - 1)]!;
      const signal = options.signal!;
      const open = new Promise<never>((_resolve, reject) => {
        const stop = (): void => reject(new DOMException('aborted', 'AbortError'));
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      });
      const sub = { 'io.modelcontextprotocol/subscriptionId': listens };
      try {
        return await stream({
          ack: (taskIds = ['t1']) =>
            options.onNotification?.({
              method: 'notifications/subscriptions/acknowledged',
              params: { notifications: { taskIds }, _meta: sub },
            }),
          push: (task) =>
            options.onNotification?.({ method: 'notifications/tasks', params: { ...task, _meta: sub } }),
          open,
        });
      } finally {
        note('end');
      }
    },
  };
  return { client, events, listens: () => listens, gets: () => gets };
}

/** The events between the `n`-th listen (0-based) and the next. */
const afterListen = (events: Array<{ event: string }>, n: number): string[] => {
  const starts = events.flatMap((e, i) => (e.event === 'listen' ? [i] : []));
  return events.slice(starts[n]! + 1, starts[n + 1] ?? events.length).map((e) => e.event);
};
/** The time between the end of each stream and the opening of the next. */
const gapsBetweenStreams = (events: Array<{ event: string; at: number }>): number[] => {
  const gaps: number[] = [];
  let ended: number | undefined;
  for (const e of events) {
    if (e.event === 'end') ended = e.at;
    if (e.event === 'listen' && ended !== undefined) gaps.push(e.at - ended);
  }
  return gaps;
};

describe('following a task by push', () => {
  it('subscribes again after the server ends the stream, reading the task at once and polling only in between', async () => {
    const server = scripted(
      [
        async ({ ack, push }) => {
          ack();
          push(working());
          await sleep(20);
          return { resultType: 'complete' }; // the server's graceful end
        },
        async ({ ack, push, open }) => {
          ack();
          push(working());
          await sleep(300);
          push(completed);
          return open;
        },
      ],
      () => working({ pollIntervalMs: 20 }),
    );
    const outcome = await new TaskHandle(server.client, 't1').result();
    expect(outcome.status).toBe('completed');
    expect(server.listens()).toBe(2);
    // Stream 1 ended; the task was read at once and polled until stream 2 opened; none while a stream was open.
    expect(afterListen(server.events, 0)[0]).toBe('end');
    expect(afterListen(server.events, 0)[1]).toBe('get');
    expect(afterListen(server.events, 1)).toEqual(['end']);
  });

  it('waits longer before each new subscription while streams keep failing, polling meanwhile', async () => {
    const failing: Stream = async () => {
      throw notReady();
    };
    const server = scripted(
      [
        failing,
        failing,
        failing,
        failing,
        async ({ ack, push, open }) => {
          ack();
          push(completed);
          return open;
        },
      ],
      () => working({ pollIntervalMs: 50 }),
    );
    expect((await new TaskHandle(server.client, 't1').result()).status).toBe('completed');
    expect(server.listens()).toBe(5);
    const gaps = gapsBetweenStreams(server.events);
    // 250 ms doubling, each a random point of its upper half: at least 125, 250, 500, 1000 ms.
    gaps.forEach((gap, k) => expect(gap).toBeGreaterThanOrEqual(125 * 2 ** k - 5));
    for (let n = 0; n < 4; n++) expect(afterListen(server.events, n)[1]).toBe('get');
  });

  it('waits for the reconnection time a stream that ended asked for, when longer than the back-off', async () => {
    const server = scripted(
      [
        async ({ ack }) => {
          ack();
          throw new StreamEndedError(1, 900, 'e-1');
        },
        async ({ ack, push, open }) => {
          ack();
          push(completed);
          return open;
        },
      ],
      () => working({ pollIntervalMs: 100 }),
    );
    expect((await new TaskHandle(server.client, 't1').result()).status).toBe('completed');
    expect(server.listens()).toBe(2);
    // The back-off alone would be under 250 ms.
    expect(gapsBetweenStreams(server.events)[0]).toBeGreaterThanOrEqual(895);
  });

  it('never subscribes again to a server without push for the task', async () => {
    for (const stream of [
      async (): Promise<JsonObject> => {
        throw new ProtocolError(ErrorCode.MethodNotFound, 'no listen', undefined, 404);
      },
      async ({ ack, open }: Parameters<Stream>[0]): Promise<JsonObject> => {
        ack([]); // not acknowledged: unknown, foreign or expired
        return open;
      },
      async (): Promise<JsonObject> => ({ resultType: 'complete' }), // answered without a stream
    ]) {
      const server = scripted([stream], (n) => (n < 3 ? working({ pollIntervalMs: 1 }) : completed));
      expect((await new TaskHandle(server.client, 't1').result()).status).toBe('completed');
      expect(server.listens()).toBe(1);
      expect(server.gets()).toBe(3);
    }
  });

  it('stops at once when the caller aborts between streams, leaving no listener on its signal', async () => {
    const server = scripted(
      [
        async () => {
          throw notReady();
        },
      ],
      () => working({ pollIntervalMs: 60_000 }),
    );
    const caller = new AbortController();
    const following = new TaskHandle(server.client, 't1').result({ signal: caller.signal });
    await vi.waitFor(() => expect(server.gets()).toBe(1));
    const started = Date.now();
    caller.abort(new Error('caller stopped'));
    await expect(following).rejects.toThrow('caller stopped');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.listens()).toBe(1);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  describe('with a fake clock', () => {
    beforeEach(() => void vi.useFakeTimers());
    afterEach(() => void vi.useRealTimers());

    it('starts the back-off over after a stream that lived 10 s', async () => {
      const failing: Stream = async () => {
        throw notReady();
      };
      const server = scripted(
        [
          failing,
          failing,
          failing,
          async ({ ack }) => {
            ack();
            await sleep(11_000);
            throw new TypeError('terminated'); // a balancer's cut
          },
          failing,
          async ({ ack, push, open }) => {
            ack();
            push(completed);
            return open;
          },
        ],
        () => working({ pollIntervalMs: 100 }),
      );
      let done = false;
      const following = new TaskHandle(server.client, 't1').result().finally(() => void (done = true));
      for (let i = 0; i < 1_000 && !done; i++) await vi.advanceTimersByTimeAsync(50);
      expect((await following).status).toBe('completed');
      const gaps = gapsBetweenStreams(server.events);
      expect(gaps).toHaveLength(5);
      expect(gaps[2]).toBeGreaterThanOrEqual(500); // after three failures in a row
      expect(gaps[3]).toBeLessThanOrEqual(250); // after the long stream: from the start again
      expect(gaps[4]).toBeGreaterThanOrEqual(250);
      expect(gaps[4]).toBeLessThanOrEqual(500);
    });
  });
});

/** A client whose server has no push: its task works for `polls` tasks/get (a new status text each), then completes. */
function pollingOnly(polls: number): TaskClient & { gets: number } {
  const client = {
    gets: 0,
    onInput: undefined,
    journalUpdate: () => undefined,
    async request(method: string): Promise<JsonObject> {
      if (method === 'subscriptions/listen') throw new ProtocolError(ErrorCode.MethodNotFound, 'no listen');
      client.gets++;
      return client.gets < polls
        ? { taskId: 't1', status: 'working', statusMessage: `step ${client.gets}`, pollIntervalMs: 1 }
        : { taskId: 't1', status: 'completed', result: { content: [] } };
    },
  };
  return client;
}

describe('following a task by polling', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => void warnings.push(w);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => void process.off('warning', onWarning));

  it.each([{ poll: false }, { poll: true }])(
    'polls 40 times with one caller signal and adds no listener that outlives its wait (%o)',
    async ({ poll }) => {
      const client = pollingOnly(40);
      const caller = new AbortController();
      const outcome = await new TaskHandle(client, 't1').result({ signal: caller.signal, poll });
      expect(outcome.status).toBe('completed');
      expect(client.gets).toBe(40);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    },
  );
});
