// The TaskStore contract: what operators read of a task's story (TaskInspection.history and step timings).
import { describe, expect, it } from 'vitest';
import { RESUMED_STATUS_MESSAGE } from '../../tasks/task.js';
import { type TaskInspection } from '../../tasks/inspection.js';
import { ALICE, must, newTask, T0, type ContractStore } from './harness.contract.js';

/** The most entries a store keeps of one task's history. */
const HISTORY_BOUND = 100;

const ask = { kind: 'input_required', requests: { ok: { method: 'elicitation/create' } } } as const;
const done = { kind: 'completed', result: { content: [], isError: false } } as const;

export function historyContract(h: ContractStore): void {
  const inspect = async (id: string): Promise<TaskInspection> =>
    must(await must(h.store.inspect, 'inspect')(id, h.t), 'inspection');
  const historyOf = async (id: string) => (await inspect(id)).history;

  describe('status history and step timings', () => {
    it('records each status a task takes through input, its answer and completion, with messages', async () => {
      const task = await h.store.create(newTask({ createdAt: T0, statusMessage: 'Queued.' }));
      const run = await h.claim('w1', T0 + 10);
      const asking = { ...ask, statusMessage: 'Waiting for approval.' };
      expect(await h.store.finish(task.id, run.token, asking, T0 + 20)).toBe(true);
      expect(await h.store.answer(task.id, ALICE, { ok: { action: 'accept' } }, T0 + 30)).toMatchObject({
        ok: true,
        resumed: true,
      });
      const again = await h.claim('w1', T0 + 40);
      const completed = { ...done, statusMessage: 'Done.' };
      expect(await h.store.finish(task.id, again.token, completed, T0 + 50)).toBe(true);
      expect(await historyOf(task.id)).toEqual([
        { at: T0, status: 'working', statusMessage: 'Queued.' },
        { at: T0 + 20, status: 'input_required', statusMessage: 'Waiting for approval.' },
        { at: T0 + 30, status: 'working', statusMessage: RESUMED_STATUS_MESSAGE },
        { at: T0 + 50, status: 'completed', statusMessage: 'Done.' },
      ]);
    });

    it('records a cancel (idle or running), a TTL expiry, and nothing for renewals or status messages', async () => {
      const idle = await h.store.create(newTask({ createdAt: T0, statusMessage: undefined }));
      await h.store.requestCancel(idle.id, ALICE, T0 + 5);
      const running = await h.running({ createdAt: T0 + 6 });
      await h.store.renew(running.id, running.token, 1_000, T0 + 7);
      await h.store.setStatusMessage(running.id, running.token, 'Halfway.', T0 + 8);
      await h.store.requestCancel(running.id, ALICE, T0 + 9);
      expect(await h.store.finish(running.id, running.token, { kind: 'cancelled' }, T0 + 10)).toBe(true);
      const late = await h.store.create(newTask({ createdAt: T0 + 11, ttlMs: 1_000 }));
      expect(await h.store.expire(T0 + 1_011)).toBe(1);
      const cancelled = { status: 'cancelled', statusMessage: 'Task was cancelled.' };
      // Created without a status message: its first entry has none.
      expect(await historyOf(idle.id)).toEqual([
        { at: T0, status: 'working' },
        { at: T0 + 5, ...cancelled },
      ]);
      expect((await historyOf(running.id))?.slice(1)).toEqual([{ at: T0 + 10, ...cancelled }]);
      expect((await historyOf(late.id))?.slice(1)).toEqual([
        { at: T0 + 1_011, status: 'failed', statusMessage: 'Task expired before it finished.' },
      ]);
    });

    it('leaves a retried task’s history as it ended; the new task’s starts with the retry', async () => {
      const admin = h.store.admin;
      if (admin === undefined) return;
      const run = await h.running({ createdAt: T0 });
      const error = { code: -32603, message: 'broke' };
      const failed = { kind: 'failed', error, statusMessage: 'It broke.' } as const;
      expect(await h.store.finish(run.id, run.token, failed, T0 + 10)).toBe(true);
      const retried = await admin.retry({ tenants: 'all' }, run.id, T0 + 20);
      if (!retried.ok) throw new Error(`refused: ${retried.reason}`);
      const history = must(await historyOf(run.id));
      expect(history.map((e) => [e.at, e.status])).toEqual([
        [T0, 'working'],
        [T0 + 10, 'failed'],
      ]);
      expect(history[1]?.statusMessage).toBe('It broke.');
      const fork = await inspect(retried.taskId);
      expect(fork.history).toEqual([{ at: T0 + 20, status: 'working', statusMessage: fork.statusMessage }]);
      expect(fork.statusMessage).toContain(run.id);
    });

    it(`keeps the latest ${HISTORY_BOUND} entries of a task that asks for input again and again`, async () => {
      const task = await h.store.create(newTask({ createdAt: T0 }));
      for (let round = 1; round <= 60; round++) {
        const at = T0 + round * 10;
        const run = await h.claim('w1', at);
        // Input keys are unique over a task's life: each round asks a new one.
        const requests = { [`ok${round}`]: { method: 'elicitation/create' } };
        expect(await h.store.finish(task.id, run.token, { kind: 'input_required', requests }, at + 1)).toBe(
          true,
        );
        await h.store.answer(task.id, ALICE, { [`ok${round}`]: { action: 'accept' } }, at + 2);
      }
      const history = must(await historyOf(task.id));
      expect(history).toHaveLength(HISTORY_BOUND);
      expect(history.at(-1)).toEqual({ at: T0 + 602, status: 'working' });
      expect(history.every((e, i) => i === 0 || e.at > (history[i - 1]?.at ?? 0))).toBe(true);
    });

    it('times each step: when its attempt started and when it was saved (unknown when not told)', async () => {
      const run = await h.running({ createdAt: T0 });
      expect(await h.store.saveStep(run.id, run.token, 'a', 1, T0 + 17, { startedAt: T0 + 5 })).toBe(true);
      expect(await h.store.saveStep(run.id, run.token, 'b', 2, T0 + 20)).toBe(true);
      const failure = { attempt: 1, name: 'Error', message: 'no', at: T0 + 21 };
      expect(await h.store.saveStepFailure(run.id, run.token, 'c', failure, T0 + 21)).toBe(true);
      const [a, b, c] = (await inspect(run.id)).steps;
      expect(a).toMatchObject({ name: 'a', done: true, startedAt: T0 + 5, savedAt: T0 + 17 });
      expect(must(a?.savedAt) - must(a?.startedAt)).toBeGreaterThanOrEqual(0);
      expect(b).toMatchObject({ name: 'b', done: true, savedAt: T0 + 20 });
      expect(b?.startedAt).toBeUndefined();
      expect(c).toMatchObject({ name: 'c', done: false, failedAttempts: 1 });
      expect(c?.startedAt).toBeUndefined();
      expect(c?.savedAt).toBeUndefined();
    });

    it('forgets the history with the task when it is purged', async () => {
      const task = await h.store.create(newTask({ createdAt: T0, ttlMs: 1_000 }));
      expect(await h.store.expire(T0 + 1_000)).toBe(1);
      expect(await historyOf(task.id)).toHaveLength(2);
      expect(await h.store.purge(T0 + 2_000, 0)).toBe(1);
      expect(await must(h.store.inspect)(task.id, T0 + 2_000)).toBeUndefined();
    });
  });
}
