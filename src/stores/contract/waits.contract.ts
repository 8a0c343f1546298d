// The TaskStore contract: Durable waits (retry backoffs, sleeps), failed step attempts, and errors kept for operators.
import { describe, expect, it } from 'vitest';
import { newTaskId } from '../../tasks/ids.js';
import type { StepFailure, TaskFailure } from '../../tasks/task.js';
import { ALICE, LEASE, newTask, T0, type ContractStore } from './harness.contract.js';

export function waitsContract(h: ContractStore): void {
  describe('waits (retry backoffs, sleeps)', () => {
    const failureOf = (attempt: number, message = `attempt ${attempt} failed`): StepFailure => ({
      attempt,
      name: 'Error',
      message,
      stack: `Error: ${message}\n    at step`,
      at: h.t,
    });

    it('keeps a waiting task out of claims until its time, then hands it over with its steps', async () => {
      const claimed = await h.running();
      expect(await h.store.saveStep(claimed.id, claimed.token, 'a', 'A', h.t)).toBe(true);
      expect(await h.store.saveStepFailure(claimed.id, claimed.token, 'b', failureOf(1), h.t)).toBe(true);
      const waiting = { kind: 'waiting', until: h.t + 5_000, statusMessage: 'Retrying at T+5s.' } as const;
      expect(await h.store.finish(claimed.id, claimed.token, waiting, h.t + 1)).toBe(true);
      expect(await h.snap(claimed.id, h.t + 2)).toMatchObject({
        status: 'working',
        statusMessage: 'Retrying at T+5s.',
        updatedAt: h.t + 1,
      });
      expect(await h.store.claim('w2', LEASE, h.t + 4_999)).toBeUndefined();
      expect(await h.store.countRunnable(h.t + 4_999)).toBe(0);
      if (h.store.nextWakeAt !== undefined) {
        expect(await h.store.nextWakeAt(h.t + 2)).toBe(h.t + 5_000);
        expect(await h.store.nextWakeAt(h.t + 5_000)).toBeUndefined();
      }
      expect(await h.store.countRunnable(h.t + 5_000)).toBe(1);
      const again = await h.claim('w2', h.t + 5_000);
      expect(again).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: false });
      expect(again.steps).toEqual({ a: 'A' });
      expect(again.stepAttempts).toEqual({ b: { failed: 1, last: failureOf(1) } });
      // Claimed once: its lease holds it like any run's.
      expect(await h.store.claim('w3', LEASE, h.t + 5_000 + LEASE - 1)).toBeUndefined();
      expect(await h.store.nextWakeAt?.(h.t)).toBeUndefined();
    });

    it('claims due waits and runnable tasks oldest first, in batches too', async () => {
      const older = await h.store.create(newTask({ createdAt: T0 }));
      const first = await h.claim('w1', T0);
      const until = T0 + 100;
      await h.store.finish(older.id, first.token, { kind: 'waiting', until, statusMessage: 'Sleeping.' }, T0);
      const younger = await h.store.create(newTask({ createdAt: T0 + 50 }));
      const batch = h.store.claimBatch?.bind(h.store);
      if (batch !== undefined) {
        expect((await batch('w2', LEASE, T0 + 99, 5)).map((c) => c.id)).toEqual([younger.id]);
        const [claimed] = await batch('w2', LEASE, T0 + 100, 5);
        expect(claimed?.id).toBe(older.id);
      } else {
        expect((await h.claim('w2', T0 + 100)).id).toBe(older.id);
        expect((await h.claim('w2', T0 + 100)).id).toBe(younger.id);
      }
    });

    it('cancels a waiting task at once: it never runs again', async () => {
      const claimed = await h.running();
      const waiting = { kind: 'waiting', until: h.t + 60_000, statusMessage: 'Sleeping.' } as const;
      await h.store.finish(claimed.id, claimed.token, waiting, h.t);
      expect(await h.store.requestCancel(claimed.id, ALICE, h.t + 1)).toEqual({
        ok: true,
        cancelledNow: true,
        running: false,
      });
      expect((await h.snap(claimed.id, h.t + 2)).status).toBe('cancelled');
      expect(await h.store.claim('w2', LEASE, h.t + 60_000)).toBeUndefined();
      expect(await h.store.nextWakeAt?.(h.t)).toBeUndefined();
    });

    it('ends the task cancelled when a cancel came while its run was deciding to wait', async () => {
      const claimed = await h.running();
      expect(await h.store.requestCancel(claimed.id, ALICE, h.t)).toMatchObject({ running: true });
      const waiting = { kind: 'waiting', until: h.t + 1_000, statusMessage: 'Sleeping.' } as const;
      expect(await h.store.finish(claimed.id, claimed.token, waiting, h.t)).toBe(true);
      expect((await h.snap(claimed.id)).status).toBe('cancelled');
      expect(await h.store.claim('w2', LEASE, h.t + 2_000)).toBeUndefined();
    });

    it('expires a waiting task whose TTL ends first', async () => {
      const claimed = await h.running({ ttlMs: 10_000 });
      const waiting = { kind: 'waiting', until: h.t + 20_000, statusMessage: 'Sleeping.' } as const;
      await h.store.finish(claimed.id, claimed.token, waiting, h.t);
      expect(await h.store.expire(h.t + 10_000)).toBe(1);
      expect(await h.store.claim('w2', LEASE, h.t + 20_000)).toBeUndefined();
      expect(await h.store.countRunnable(h.t + 20_000)).toBe(0);
    });

    it('refuses a wait under a stale token', async () => {
      const task = await h.store.create(newTask());
      const first = await h.claim('w1', T0);
      const second = await h.claim('w2', T0 + LEASE + 1);
      const waiting = { kind: 'waiting', until: T0 + 60_000, statusMessage: 'Sleeping.' } as const;
      expect(await h.store.finish(task.id, first.token, waiting, T0 + LEASE + 2)).toBe(false);
      expect(await h.store.renew(task.id, second.token, LEASE, T0 + LEASE + 3)).toMatchObject({ held: true });
    });

    it('records failed step attempts under the current token only', async () => {
      const task = await h.store.create(newTask());
      const first = await h.claim('w1', T0);
      expect(await h.store.saveStepFailure(task.id, first.token, 's', failureOf(1), T0)).toBe(true);
      const second = await h.claim('w2', T0 + LEASE + 1);
      expect(second.stepAttempts).toEqual({ s: { failed: 1, last: failureOf(1) } });
      expect(await h.store.saveStepFailure(task.id, first.token, 's', failureOf(2, 'zombie'), h.t)).toBe(
        false,
      );
      const final = { ...failureOf(2), final: true };
      expect(await h.store.saveStepFailure(task.id, second.token, 's', final, h.t)).toBe(true);
      await h.store.finish(task.id, second.token, { kind: 'released' }, h.t);
      const third = await h.claim('w3', T0 + LEASE + 2);
      expect(third.stepAttempts).toEqual({ s: { failed: 2, last: final } });
    });
  });

  describe('kept errors', () => {
    const failure: TaskFailure = {
      ref: 'err_abc',
      name: 'TypeError',
      message: 'snapshot: timed out after 500 ms',
      stack: 'TypeError: snapshot: timed out after 500 ms\n    at snapshot (tool.js:1:1)',
      step: 'snapshot',
      attempt: 3,
      at: T0,
    };

    it('keeps the error of a completed (isError) or failed task for operators, not in the snapshot', async (ctx) => {
      const inspect = h.store.inspect?.bind(h.store);
      if (inspect === undefined) return ctx.skip();
      const a = await h.running();
      const result = { content: [{ type: 'text', text: failure.message }], isError: true };
      const completed = { kind: 'completed', result, statusMessage: 'The tool failed.', failure } as const;
      expect(await h.store.finish(a.id, a.token, completed, h.t)).toBe(true);
      expect(await h.snap(a.id)).toMatchObject({
        status: 'completed',
        result,
        statusMessage: 'The tool failed.',
      });
      expect(JSON.stringify(await h.snap(a.id))).not.toContain('tool.js');
      expect(await inspect(a.id, h.t)).toMatchObject({
        id: a.id,
        owner: ALICE,
        tool: 'echo',
        status: 'completed',
        attempt: 1,
        failure,
        steps: [],
      });

      const b = await h.running();
      await h.store.saveStep(b.id, b.token, 'fetch', 1, h.t);
      const stepFailure = { attempt: 1, name: 'Error', message: 'no', at: h.t, final: true };
      await h.store.saveStepFailure(b.id, b.token, 'snapshot', stepFailure, h.t);
      const error = { code: -32603, message: 'broken' };
      const failed = { kind: 'failed', error, statusMessage: 'Broken.', failure } as const;
      expect(await h.store.finish(b.id, b.token, failed, h.t)).toBe(true);
      expect(await inspect(b.id, h.t)).toMatchObject({
        status: 'failed',
        error,
        failure,
        steps: [
          { name: 'fetch', done: true, failedAttempts: 0, lastFailure: undefined },
          { name: 'snapshot', done: false, failedAttempts: 1, lastFailure: stepFailure },
        ],
      });
      expect(await inspect(newTaskId(), h.t)).toBeUndefined();
    });
  });
}
