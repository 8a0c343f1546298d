// The TaskStore contract: events from outside a task (TaskStore.events). An event delivered before the task waits is
// kept and taken by the wait; one delivered while it waits wakes it at once, on any process; the first payload wins,
// a repeat of it changes nothing and another is refused; a wait times out with a typed answer; finished tasks and
// others' tasks take none; kept events are bounded.
import { describe, expect, it } from 'vitest';
import { MAX_PENDING_EVENTS, type EventDelivery, type OutsideEventPort } from '../../tasks/events.js';
import type { TaskStore } from '../../tasks/store.js';
import type { ClaimedTask } from '../../tasks/task.js';
import { ALICE, BOB, LEASE, must, newTask, type ContractStore } from './harness.contract.js';

const json = (value: unknown): string => JSON.stringify(value);

export function outsideEventsContract(h: ContractStore): void {
  describe('events from outside a task', () => {
    const port = (): OutsideEventPort => must(h.store.events, 'events port');
    const send = (taskId: string, name: string, payload: unknown, extra: Partial<EventDelivery> = {}) =>
      port().deliver({ taskId, name, json: json(payload), by: { owner: ALICE }, ...extra }, h.t);
    const waitFor = (run: ClaimedTask, name: string, until = h.t + 60_000, schema?: Record<string, never>) =>
      port().wait(run.id, run.token, name, { until, schema }, h.t);
    const endWaiting = async (run: ClaimedTask, until: number): Promise<void> => {
      const waiting = { kind: 'waiting', until, statusMessage: 'Waiting for an event.' } as const;
      expect(await h.store.finish(run.id, run.token, waiting, h.t)).toBe(true);
    };

    it('hands an event to the waiting task and makes it runnable now; a repeat is no change', async (ctx) => {
      if (h.store.events === undefined) return ctx.skip();
      const run = await h.running();
      expect(await waitFor(run, 'approved')).toEqual({ kind: 'waiting', until: h.t + 60_000 });
      await endWaiting(run, h.t + 60_000);
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
      const heard: string[] = [];
      const stop = h.store.changes?.subscribe((c) => c.runnable && heard.push(c.taskId));
      h.t += 10;
      expect(await send(run.id, 'approved', { ok: true })).toEqual({ ok: true, outcome: 'delivered' });
      stop?.();
      if (h.store.changes !== undefined) expect(heard).toContain(run.id);
      expect(await send(run.id, 'approved', { ok: true })).toEqual({ ok: true, outcome: 'repeat' });
      expect(await send(run.id, 'approved', { ok: false })).toMatchObject({ ok: false, reason: 'conflict' });
      const again = await h.claim();
      expect(again.id).toBe(run.id);
      expect(await waitFor(again, 'approved')).toEqual({
        kind: 'received',
        payload: { ok: true },
        checked: false,
      });
      // Taken once, it is the same on a replay, and no ending wakes the task for it again.
      expect(await waitFor(again, 'approved')).toMatchObject({ kind: 'received', payload: { ok: true } });
      expect(await waitFor(again, 'other')).toMatchObject({ kind: 'waiting' });
      await endWaiting(again, h.t + 60_000);
      expect(await h.store.claim('w1', LEASE, h.t)).toBeUndefined();
    });

    it('keeps an event delivered before the wait, and hands it to the wait', async (ctx) => {
      if (h.store.events === undefined) return ctx.skip();
      const run = await h.running();
      expect(await send(run.id, 'early', [1, 2])).toEqual({ ok: true, outcome: 'kept' });
      expect(await send(run.id, 'early', [1, 2])).toEqual({ ok: true, outcome: 'repeat' });
      expect(await waitFor(run, 'early')).toEqual({ kind: 'received', payload: [1, 2], checked: false });
    });

    it('wakes a run that ends waiting after the event arrived during it', async (ctx) => {
      if (h.store.events === undefined) return ctx.skip();
      const run = await h.running();
      expect(await waitFor(run, 'done')).toMatchObject({ kind: 'waiting' });
      // Delivered while the run still holds the task: its ending waits from now, not until the time out.
      expect(await send(run.id, 'done', 'yes')).toEqual({ ok: true, outcome: 'delivered' });
      // Its ending says the task is runnable: a worker of this process claims it at once, not at its next poll.
      const heard: boolean[] = [];
      const stop = h.store.changes?.subscribe((c) => c.taskId === run.id && heard.push(c.runnable));
      await endWaiting(run, h.t + 60_000);
      stop?.();
      if (h.store.changes !== undefined) expect(heard).toEqual([true]);
      expect((await h.claim('w1', h.t + 1)).id).toBe(run.id);
    });

    it('times a wait out with a typed answer, and refuses the event after', async (ctx) => {
      if (h.store.events === undefined) return ctx.skip();
      const run = await h.running();
      expect(await waitFor(run, 'late', h.t + 100)).toEqual({ kind: 'waiting', until: h.t + 100 });
      // A replay asks with a later time out: the first one holds.
      h.t += 100;
      expect(await waitFor(run, 'late', h.t + 100)).toEqual({ kind: 'timed_out' });
      expect(await send(run.id, 'late', 1)).toMatchObject({ ok: false, reason: 'timed_out' });
    });

    it('checks a delivery against the schema the wait registered', async (ctx) => {
      if (h.store.events === undefined) return ctx.skip();
      const run = await h.running();
      await waitFor(run, 'typed', h.t + 60_000, {});
      const check = (_schema: unknown, payload: unknown) =>
        typeof payload === 'number' ? undefined : 'not a number';
      expect(await send(run.id, 'typed', 'x', { check })).toMatchObject({ ok: false, reason: 'invalid' });
      expect(await send(run.id, 'typed', 3, { check })).toEqual({ ok: true, outcome: 'delivered' });
      expect(await waitFor(run, 'typed')).toEqual({ kind: 'received', payload: 3, checked: true });
    });

    it("refuses others' tasks as unknown, finished tasks, and kept events past the bound", async (ctx) => {
      if (h.store.events === undefined) return ctx.skip();
      const run = await h.running();
      expect(await send('no-such-task', 'x', 1)).toMatchObject({ ok: false, reason: 'not_found' });
      expect(await send(run.id, 'x', 1, { by: { owner: BOB } })).toMatchObject({
        ok: false,
        reason: 'not_found',
      });
      expect(await send(run.id, 'x', 1, { by: { operator: { tenants: ['globex'] } } })).toMatchObject({
        ok: false,
        reason: 'not_found',
      });
      expect(await send(run.id, 'x', 1, { by: { callback: true } })).toEqual({ ok: true, outcome: 'kept' });
      for (let i = 1; i < MAX_PENDING_EVENTS; i++) await send(run.id, `e${i}`, i);
      expect(await send(run.id, 'one-more', 1)).toMatchObject({ ok: false, reason: 'too_many' });
      const completed = { kind: 'completed', result: { content: [] } } as const;
      expect(await h.store.finish(run.id, run.token, completed, h.t)).toBe(true);
      expect(await send(run.id, 'y', 1)).toMatchObject({ ok: false, reason: 'ended' });
      // A repeat of an accepted event is answered as before, also after the end; another payload still conflicts.
      expect(await send(run.id, 'x', 1)).toEqual({ ok: true, outcome: 'repeat' });
      expect(await send(run.id, 'x', 2)).toMatchObject({ ok: false, reason: 'conflict' });
    });

    it('refuses a wait of a run that no longer holds the task', async (ctx) => {
      if (h.store.events === undefined) return ctx.skip();
      const run = await h.running();
      expect(await port().wait(run.id, run.token + 1, 'x', { until: h.t + 1 }, h.t)).toBeUndefined();
    });
  });
}

/** After an upgrade to events (migration 29): a task created after waits for an event, which wakes it. */
export async function expectEventsAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const events = must(store.events, 'events port');
  const task = await store.create(newTask({ createdAt: now }));
  let run: ClaimedTask | undefined;
  for (let i = 0; i < 20 && run?.id !== task.id; i++) run = await store.claim('w', LEASE, now);
  const claimed = must(run?.id === task.id ? run : undefined, 'claim of the new task');
  expect(await events.wait(task.id, claimed.token, 'upgraded', { until: now + 60_000 }, now)).toMatchObject({
    kind: 'waiting',
  });
  const waiting = { kind: 'waiting', until: now + 60_000, statusMessage: 'Waiting.' } as const;
  expect(await store.finish(task.id, claimed.token, waiting, now)).toBe(true);
  const delivery = { taskId: task.id, name: 'upgraded', json: '1', by: { callback: true } } as const;
  expect(await events.deliver(delivery, now + 1)).toEqual({ ok: true, outcome: 'delivered' });
  let again: ClaimedTask | undefined;
  for (let i = 0; i < 20 && again?.id !== task.id; i++) again = await store.claim('w', LEASE, now + 2);
  expect(again?.id).toBe(task.id);
}
