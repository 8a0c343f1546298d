import { describe, expect, it } from 'vitest';
import type { TaskAdmin } from '../tasks/admin.js';
import type { TaskChange } from '../tasks/store.js';
import type { TaskInspection } from '../tasks/inspection.js';
import { createTaskEventHub, toSummary, type EventListener, type TaskEvent } from './events.js';

const task = (id: string, tenant: string, status: TaskInspection['status'] = 'working'): TaskInspection => ({
  id,
  owner: { tenant, principal: 'p' },
  tool: 't',
  toolVersion: undefined,
  status,
  outcome: undefined,
  statusMessage: undefined,
  createdAt: 0,
  updatedAt: 1,
  expiresAt: null,
  retryOf: undefined,
  attempt: 1,
  leaseOwner: undefined,
  leaseUntil: undefined,
  wakeAt: undefined,
  cancelRequested: false,
  idempotencyKey: undefined,
  steps: [],
  failure: undefined,
  error: undefined,
});

/** A change feed the test drives, and a store whose reads it counts and can hold. */
function setup() {
  const listeners = new Set<(change: TaskChange) => void>();
  const resyncs = new Set<() => void>();
  const tasks = new Map<string, TaskInspection>();
  const reads: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  const store = {
    detail: async (_scope, id) => {
      reads.push(id);
      await gate;
      return tasks.get(id);
    },
  } as Pick<TaskAdmin, 'detail'> as TaskAdmin;
  const changes = {
    subscribe(listener: (change: TaskChange) => void, onResync?: () => void) {
      listeners.add(listener);
      if (onResync) resyncs.add(onResync);
      return () => {
        listeners.delete(listener);
        if (onResync) resyncs.delete(onResync);
      };
    },
  };
  const hub = createTaskEventHub({ changes, store, now: () => 0 });
  const change = (taskId: string) => {
    for (const l of listeners) l({ taskId, runnable: false, cancelRequested: false });
  };
  const hold = () => {
    let open = () => undefined as void;
    gate = new Promise<void>((resolve) => (open = resolve));
    return () => open();
  };
  return { hub, tasks, reads, change, listeners, resyncs, hold };
}

const stream = (tenants: 'all' | string[]) => {
  const events: (TaskEvent | 'resync')[] = [];
  const frames: Buffer[] = [];
  const listener: EventListener = {
    scope: { tenants },
    send: (e, frame) => {
      events.push(e);
      frames.push(frame);
    },
    resync: () => events.push('resync'),
  };
  return { events, frames, listener };
};

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('the task event hub', () => {
  it('reads a changed task once and sends it only to the streams whose tenants hold it', async () => {
    const s = setup();
    const a = stream(['A']);
    const b = stream(['B']);
    const all = stream('all');
    for (const x of [a, b, all]) s.hub.open(x.listener);
    expect(s.listeners.size).toBe(1);
    s.tasks.set('t1', task('t1', 'A'));
    s.change('t1');
    await settle();
    expect(s.reads).toEqual(['t1']);
    expect(a.events).toEqual([{ taskId: 't1', task: expect.objectContaining({ id: 't1', tenant: 'A' }) }]);
    expect(all.events).toHaveLength(1);
    expect(b.events).toEqual([]);
  });

  it('serialises each change once: every stream is handed the same bytes', async () => {
    const s = setup();
    const streams = [stream(['A']), stream('all'), stream(['A', 'B'])];
    for (const x of streams) s.hub.open(x.listener);
    s.tasks.set('t1', task('t1', 'A'));
    s.change('t1');
    await settle();
    const [first] = streams[0]?.frames ?? [];
    expect(first?.toString()).toBe(`data: ${JSON.stringify(streams[0]?.events[0])}\n\n`);
    for (const x of streams) expect(x.frames).toHaveLength(1);
    for (const x of streams) expect(x.frames[0]).toBe(first);
  });

  it('tells a stream of a purged task it was shown, and nobody else', async () => {
    const s = setup();
    const a = stream(['A']);
    const b = stream(['B']);
    s.hub.open(a.listener);
    s.hub.open(b.listener);
    s.tasks.set('t1', task('t1', 'A', 'completed'));
    s.change('t1');
    await settle();
    s.tasks.delete('t1');
    s.change('t1');
    await settle();
    expect(a.events.at(-1)).toEqual({ taskId: 't1', removed: true });
    expect(b.events).toEqual([]);
  });

  it('reads again once after changes that arrive during a read', async () => {
    const s = setup();
    const a = stream('all');
    s.hub.open(a.listener);
    s.tasks.set('t1', task('t1', 'A'));
    const release = s.hold();
    s.change('t1');
    s.change('t1');
    s.change('t1');
    s.tasks.set('t1', task('t1', 'A', 'completed'));
    release();
    await settle();
    await settle();
    expect(s.reads).toEqual(['t1', 't1']);
    expect(a.events.at(-1)).toMatchObject({ task: { status: 'completed' } });
  });

  it('passes resyncs on, and unsubscribes when the last stream closes', () => {
    const s = setup();
    const a = stream('all');
    const closeA = s.hub.open(a.listener);
    const closeB = s.hub.open(stream('all').listener);
    for (const r of s.resyncs) r();
    expect(a.events).toEqual(['resync']);
    closeA();
    expect(s.listeners.size).toBe(1);
    closeB();
    closeB();
    expect(s.listeners.size).toBe(0);
    s.hub.open(a.listener);
    expect(s.listeners.size).toBe(1);
  });
});

describe('an event’s row', () => {
  it('carries a failed task’s error code, message and outcome word, never the rest of its data', () => {
    const failed: TaskInspection = {
      ...task('t1', 'acme', 'failed'),
      error: { code: -32603, message: 'outcome unknown', data: { outcome: 'unknown', secret: 'kept' } },
    };
    expect(toSummary(failed).error).toEqual({ code: -32603, message: 'outcome unknown', outcome: 'unknown' });
    const plain: TaskInspection = {
      ...failed,
      error: { code: 1, message: 'no', data: { outcome: 'Not a word' } },
    };
    expect(toSummary(plain).error).toEqual({ code: 1, message: 'no' });
  });
});
