// The TaskStore contract: child tasks (NewTask.parent, ctx.callTool). A child's ending makes its waiting parent due
// in the same write (a wait the parent begins after a child ended during its run too), a cancel of the parent reaches
// its children not detached and theirs, and `family` shows a task's parent and children to its owner.
import { describe, expect, it } from 'vitest';
import type { TaskChange, TaskStore } from '../../tasks/store.js';
import type { ClaimedTask, NewTask } from '../../tasks/task.js';
import { ALICE, BOB, LEASE, must, newTask, taskHelpers, type ContractStore } from './harness.contract.js';

const HOUR = 3_600_000;

export function childrenContract(h: ContractStore): void {
  /** A running parent (claimed), and `create` for its children (created now, under it). */
  const parentRunning = async (): Promise<{
    parent: ClaimedTask;
    child: (overrides?: Partial<NewTask>) => Promise<string>;
  }> => {
    const parent = await h.running({ tool: 'parent' });
    const child = async (overrides: Partial<NewTask> = {}): Promise<string> =>
      (
        await h.store.create(
          newTask({ createdAt: h.t, tool: 'child', parent: { id: parent.id }, ...overrides }),
        )
      ).id;
    return { parent, child };
  };
  /** The parent's run ends waiting for an hour. */
  const waitAnHour = async (parent: ClaimedTask): Promise<void> => {
    const wait = { kind: 'waiting', until: h.t + HOUR, statusMessage: 'Waiting for a child.' } as const;
    expect(await h.store.finish(parent.id, parent.token, wait, h.t)).toBe(true);
  };

  describe('child tasks', () => {
    it("a child's ending makes its waiting parent due at once, and a change says it is runnable", async () => {
      const { parent, child } = await parentRunning();
      const childId = await child();
      await waitAnHour(parent);
      h.t += 10;
      const claimed = await h.claim('w2');
      expect(claimed.id).toBe(childId);
      // Nothing else is due: the parent waits for its hour.
      expect(await h.store.claim('w3', LEASE, h.t)).toBeUndefined();
      const seen: TaskChange[] = [];
      const unsubscribe = must(h.store.changes, 'change feed').subscribe((c) => seen.push(c));
      try {
        const done = { kind: 'completed', result: { content: [] }, statusMessage: 'Done.' } as const;
        expect(await h.store.finish(childId, claimed.token, done, h.t)).toBe(true);
        expect(seen.some((c) => c.taskId === parent.id && c.runnable)).toBe(true);
      } finally {
        unsubscribe();
      }
      const again = await h.claim('w3');
      expect(again.id).toBe(parent.id);
    });

    it('a child that ended during its parent’s run makes the wait the run then begins due at once', async () => {
      const { parent, child } = await parentRunning();
      const childId = await child();
      const run = await h.claim('w2');
      expect(run.id).toBe(childId);
      expect(await h.store.finish(childId, run.token, { kind: 'cancelled' }, h.t)).toBe(true);
      await waitAnHour(parent);
      expect((await h.claim('w3')).id).toBe(parent.id);
      // The note is used up: the next wait of the parent lasts.
      const again = await h.store.claim('w3', LEASE, h.t);
      expect(again).toBeUndefined();
    });

    it('a child cancelled by its owner, or expired, ends its parent’s wait too', async () => {
      const { parent, child } = await parentRunning();
      const cancelled = await child();
      const expiring = await child({ ttlMs: 100 });
      await waitAnHour(parent);
      expect(await h.store.requestCancel(cancelled, ALICE, h.t)).toMatchObject({
        ok: true,
        cancelledNow: true,
      });
      // Due: the parent (and the other child, waiting for its first run).
      const claimed = await taskHelpers(h).claimAll('w2');
      expect(claimed.map((c) => c.id).sort()).toEqual([parent.id, expiring].sort());
      await waitAnHour(must(claimed.find((c) => c.id === parent.id)));
      h.t += 200;
      expect(await h.store.expire(h.t)).toBe(1);
      expect((await h.snap(expiring, h.t - 150)).status).toBe('failed');
      expect((await h.claim('w3')).id).toBe(parent.id);
    });

    it('a child whose run ends waiting or asking after a cancel ends cancelled, and its parent’s wait ends', async () => {
      const { parent, child } = await parentRunning();
      const waits = await child();
      const asks = await child();
      await waitAnHour(parent);
      const runs = await taskHelpers(h).claimAll('w2');
      expect(runs.map((r) => r.id).sort()).toEqual([waits, asks].sort());
      for (const id of [waits, asks])
        expect(await h.store.requestCancel(id, ALICE, h.t)).toMatchObject({ ok: true, running: true });
      const [w, a] = [must(runs.find((r) => r.id === waits)), must(runs.find((r) => r.id === asks))];
      const wait = { kind: 'waiting', until: h.t + HOUR, statusMessage: 'Sleeping.' } as const;
      expect(await h.store.finish(waits, w.token, wait, h.t)).toBe(true);
      expect((await h.snap(waits)).status).toBe('cancelled');
      const woken = await h.claim('w3');
      expect(woken.id).toBe(parent.id);
      await waitAnHour(woken);
      const ask = { kind: 'input_required', requests: { k: {} }, statusMessage: 'Asking.' } as const;
      expect(await h.store.finish(asks, a.token, ask, h.t)).toBe(true);
      expect((await h.snap(asks)).status).toBe('cancelled');
      expect((await h.claim('w4')).id).toBe(parent.id);
    });

    it('cancelling a parent cancels its children not detached, and theirs; a running one is asked to stop', async () => {
      const { parent, child } = await parentRunning();
      const running = await child();
      const run = await h.claim('w2');
      expect(run.id).toBe(running);
      const attached = await child();
      const detached = await child({ parent: { id: parent.id, detached: true } });
      const grandchild = await child({ parent: { id: attached } });
      const ofDetached = await child({ parent: { id: detached } });
      await waitAnHour(parent);
      expect(await h.store.requestCancel(parent.id, ALICE, h.t)).toMatchObject({
        ok: true,
        cancelledNow: true,
      });
      expect((await h.snap(parent.id)).status).toBe('cancelled');
      expect((await h.snap(attached)).status).toBe('cancelled');
      expect((await h.snap(grandchild)).status).toBe('cancelled');
      expect((await h.snap(detached)).status).toBe('working');
      expect((await h.snap(ofDetached)).status).toBe('working');
      expect((await h.snap(running)).status).toBe('working');
      expect(await h.store.renew(running, run.token, LEASE, h.t)).toEqual({
        held: true,
        cancelRequested: true,
      });
    });

    it('a child whose run ends waiting while its parent is cancelled ends cancelled, whichever commits first', async () => {
      // The cancel decides per child between "ask the run to stop" and "cancelled now" from the child's lease: a
      // wait that ends the run between that read and the cancel's write must not leave it waiting an hour.
      const rounds = 40;
      const stranded: string[] = [];
      for (let i = 0; i < rounds; i++) {
        const { parent, child } = await parentRunning();
        const childId = await child();
        const run = await h.claim('w2');
        expect(run.id).toBe(childId);
        await waitAnHour(parent);
        const wait = { kind: 'waiting', until: h.t + HOUR, statusMessage: 'Sleeping.' } as const;
        const [cancel] = await Promise.all([
          h.store.requestCancel(parent.id, ALICE, h.t),
          // Half the rounds start the wait a little later, so that it can land between the cancel's statements.
          (i % 2 === 0 ? Promise.resolve() : new Promise((r) => setImmediate(r))).then(() =>
            h.store.finish(childId, run.token, wait, h.t),
          ),
        ]);
        expect(cancel).toMatchObject({ ok: true });
        if ((await h.snap(childId)).status !== 'cancelled') stranded.push(childId);
        h.t += 1;
      }
      expect(stranded).toEqual([]);
    });

    it('family: a task’s parent and its children in creation order, to its owner only', async () => {
      const { parent, child } = await parentRunning();
      const a = await child();
      h.t += 1;
      const b = await child({ parent: { id: parent.id, detached: true } });
      const family = must(h.store.family, 'family');
      expect(await family(parent.id, ALICE)).toEqual({
        children: [
          { id: a, tool: 'child', status: 'working' },
          { id: b, tool: 'child', status: 'working' },
        ],
      });
      expect(await family(a, ALICE)).toEqual({ parentId: parent.id, children: [] });
      expect(await family(a, BOB)).toBeUndefined();
      // Operators see them too, whoever owns the task.
      const inspect = must(h.store.inspect, 'inspect');
      expect((await inspect.call(h.store, parent.id, h.t))?.children).toEqual([
        { id: a, tool: 'child', status: 'working' },
        { id: b, tool: 'child', status: 'working' },
      ]);
      const ofChild = await inspect.call(h.store, b, h.t);
      expect(ofChild?.parentId).toBe(parent.id);
      expect(ofChild?.children).toEqual([]);
      // tasks/get reads them with the task.
      expect((await h.snap(a)).parentId).toBe(parent.id);
      expect((await h.snap(parent.id)).hasChildren).toBe(true);
      expect((await h.snap(a)).hasChildren).toBeUndefined();
    });
  });
}

/** Claims at `now` until task `id` is claimed (other due tasks drained on the way; at most 50 claims). */
async function claimUntil(store: TaskStore, id: string, now: number): Promise<ClaimedTask> {
  for (let i = 0; i < 50; i++) {
    const c = await store.claim('w', LEASE, now);
    if (c === undefined) break;
    if (c.id === id) return c;
  }
  throw new Error(`task ${id} was not claimed`);
}

/**
 * After the upgrade that added child tasks (migration 28): a child created after ends its parent's wait at once,
 * and the parent shows it as its child.
 */
export async function expectChildrenAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const parent = await store.create(newTask({ createdAt: now, tool: 'upgraded-parent' }));
  const run = await claimUntil(store, parent.id, now);
  const child = await store.create(
    newTask({ createdAt: now, tool: 'upgraded-child', parent: { id: parent.id } }),
  );
  const wait = { kind: 'waiting', until: now + HOUR, statusMessage: 'Waiting for a child.' } as const;
  expect(await store.finish(parent.id, run.token, wait, now)).toBe(true);
  const childRun = await claimUntil(store, child.id, now);
  const done = { kind: 'completed', result: { content: [] }, statusMessage: 'Done.' } as const;
  expect(await store.finish(child.id, childRun.token, done, now)).toBe(true);
  expect((await store.claim('w', LEASE, now))?.id).toBe(parent.id);
  expect(await must(store.family, 'family').call(store, parent.id, ALICE)).toEqual({
    children: [{ id: child.id, tool: 'upgraded-child', status: 'completed' }],
  });
}
