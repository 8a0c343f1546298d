// The TaskStore contract: what a task's owner is shown besides its status. The progress its handler showed last is
// kept with the task (the next run, on any process, starts from it), and a runnable task that no process able to run
// its version has claimed is shown as waiting for one, until one claims it.
import { describe, expect, it } from 'vitest';
import type { ClaimScope, TaskChange } from '../../tasks/store.js';
import { versionWaitMessage } from '../../tasks/task.js';
import { LEASE, must, newTask, type ContractStore } from './harness.contract.js';

const V2: ClaimScope = { tools: { report: ['2'], echo: [] } };
const V1: ClaimScope = { tools: { report: ['1'], echo: [] } };
const WAIT = 10_000;

export function shownContract(h: ContractStore): void {
  describe('progress shown', () => {
    it('keeps the progress shown last: a message without progress keeps it, and the next run gets it', async () => {
      const run = await h.running();
      expect((await h.snap(run.id)).progress).toBeUndefined();
      expect(run.progress).toBeUndefined();
      const shown = { progress: 3, total: 4 };
      expect(await h.store.setStatusMessage(run.id, run.token, 'Copying (3/4)', h.t + 1, shown)).toBe(true);
      expect(await h.snap(run.id)).toMatchObject({ statusMessage: 'Copying (3/4)', progress: shown });
      expect(await h.store.setStatusMessage(run.id, run.token, 'Sleeping.', h.t + 2)).toBe(true);
      expect(await h.snap(run.id)).toMatchObject({ statusMessage: 'Sleeping.', progress: shown });
      // The lease lapses (a crash): the next run, wherever it runs, starts from what was shown.
      const next = await h.claim('w2', h.t + LEASE + 10);
      expect(next.progress).toEqual(shown);
      expect(
        await h.store.setStatusMessage(run.id, run.token, 'stale', h.t + LEASE + 11, { progress: 0 }),
      ).toBe(false);
      expect((await h.snap(run.id)).progress).toEqual(shown);
      await h.store.setStatusMessage(next.id, next.token, 'Done (4)', h.t + LEASE + 12, { progress: 4 });
      expect((await h.snap(next.id)).progress).toEqual({ progress: 4 });
    });
  });

  describe('version waits', () => {
    const changesOf = (id: string) => {
      const seen: TaskChange[] = [];
      const stop = h.store.changes?.subscribe((c) => {
        if (c.taskId === id) seen.push(c);
      });
      return { seen, stop: () => stop?.() };
    };

    it('shows a task no process claimed for a while as waiting for its version, until a run claims it', async (ctx) => {
      const mark = h.store.markVersionWaits?.bind(h.store);
      if (mark === undefined) return ctx.skip();
      const task = await h.store.create(newTask({ tool: 'report', toolVersion: '1', createdAt: h.t }));
      // Not before it went unclaimed for the wait.
      expect(await mark(V2, h.t + 10, h.t + 10 - WAIT, 100)).toBe(0);
      expect((await h.snap(task.id)).statusMessage).toBe('Queued.');
      const changes = changesOf(task.id);
      h.t += WAIT;
      expect(await mark(V2, h.t, h.t - WAIT, 100)).toBe(1);
      const waiting = await h.snap(task.id);
      expect(waiting.statusMessage).toBe(versionWaitMessage('report', '1'));
      expect(waiting.updatedAt).toBe(h.t);
      // Marked once.
      expect(await mark(V2, h.t + 1, h.t + 1 - WAIT, 100)).toBe(0);
      await expect.poll(() => changes.seen.length).toBeGreaterThan(0);
      // A process that runs version 1 claims it: no longer waiting, and subscribers hear so.
      changes.seen.length = 0;
      const run = must(await h.store.claim('w1', LEASE, h.t + 2, V1));
      expect(run.id).toBe(task.id);
      expect((await h.snap(task.id, h.t + 2)).statusMessage).toBe('Queued.');
      await expect.poll(() => changes.seen.length).toBeGreaterThan(0);
      changes.stop();
      // Handed back, it is not shown as waiting again until it went unclaimed for the wait once more.
      await h.store.finish(run.id, run.token, { kind: 'released' }, h.t + 3);
      expect(await mark(V2, h.t + 4, h.t + 4 - WAIT, 100)).toBe(0);
      expect((await h.snap(task.id, h.t + 4)).statusMessage).toBe('Queued.');
    });

    it('marks only runnable tasks of its tools that its scope leaves out and no run held since', async (ctx) => {
      const mark = h.store.markVersionWaits?.bind(h.store);
      if (mark === undefined) return ctx.skip();
      const at = (tool: string, toolVersion?: string) =>
        h.store.create(
          newTask({ tool, ...(toolVersion === undefined ? {} : { toolVersion }), createdAt: h.t }),
        );
      const held = await at('report', '1');
      const run = must(await h.store.claim('w1', 10 * WAIT, h.t, V1));
      expect(run.id).toBe(held.id);
      const mine = await at('report', '2');
      const plain = await at('report');
      const elsewhere = await at('retired', '1');
      const left = await at('report', '3');
      h.t += 2 * WAIT;
      expect(await mark(V2, h.t, h.t - WAIT, 100)).toBe(1);
      expect((await h.snap(left.id)).statusMessage).toBe(versionWaitMessage('report', '3'));
      for (const t of [mine, plain, elsewhere, held])
        expect((await h.snap(t.id)).statusMessage).not.toContain('Waiting for a server');
      // At most `max` a call.
      await at('report', '4');
      await at('report', '4');
      h.t += 2 * WAIT;
      expect(await mark(V2, h.t, h.t - WAIT, 1)).toBe(1);
      expect(await mark(V2, h.t, h.t - WAIT, 1)).toBe(1);
      expect(await mark(V2, h.t, h.t - WAIT, 1)).toBe(0);
    });
  });
}
