// Concurrency limits and priorities in a testing-kit run, as on a server: with room for two runs, a task whose key is
// full waits (and says so) while another customer's runs; a slot its holder's cancel freed lets the waiting task run;
// the caller's priority reorders the caller's tasks where the kit allows it.
import { describe, expect, it } from 'vitest';
import { defineTool, textResult } from '../src/index.js';
import { BlockedOnClockError, createTestKit, type TestKit } from '../src/testing.js';

const WAITING = 'Waiting for a free slot of concurrency key "customer:acme" to run.';

describe('a concurrency limit in a kit run', () => {
  it('with room for two runs, the second task of a full key waits while another key’s task runs', async () => {
    const log: string[] = [];
    const the: { kit?: TestKit } = {};
    const sync = defineTool<{ customer: string; n: number }>({
      name: 'sync_customer',
      inputSchema: { type: 'object', properties: { customer: { type: 'string' }, n: { type: 'number' } } },
      task: { support: 'required', concurrency: { limit: 1, key: (a) => `customer:${String(a.customer)}` } },
      handler: async ({ n }, ctx) => {
        // A call that takes a second of the kit's clock.
        await ctx.step('sync', () => {
          log.push(`start ${n}`);
          return new Promise<void>((resolve) =>
            the.kit?.clock.setTimer(() => {
              log.push(`end ${n}`);
              resolve();
            }, 1_000),
          );
        });
        return textResult(`synced ${n}`);
      },
    });
    const kit = await createTestKit({ tools: [sync as never], concurrency: 2 });
    the.kit = kit;
    try {
      const a = await kit.start('sync_customer', { customer: 'acme', n: 1 });
      const b = await kit.start('sync_customer', { customer: 'acme', n: 2 });
      const c = await kit.start('sync_customer', { customer: 'globex', n: 3 });
      await expect(kit.settle()).rejects.toBeInstanceOf(BlockedOnClockError);
      expect(log).toEqual(['start 1', 'start 3']);
      expect((await b.get()).statusMessage).toBe(WAITING);
      expect((await c.get()).statusMessage).not.toBe(WAITING);

      await kit.settle({ advance: true });
      expect(log).toEqual(['start 1', 'start 3', 'end 1', 'end 3', 'start 2', 'end 2']);
      for (const t of [a, b, c]) expect((await t.get()).status).toBe('completed');
    } finally {
      await kit.close();
    }
  });

  it('one run at a time by default; a concurrency out of range is refused', async () => {
    const log: string[] = [];
    const job = defineTool<{ n: number }>({
      name: 'job',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      task: { support: 'required' },
      handler: async ({ n }, ctx) => {
        await ctx.step('work', () => void log.push(`start ${n}`));
        await ctx.sleep('rest', 1_000);
        await ctx.step('done', () => void log.push(`end ${n}`));
        return textResult('ok');
      },
    });
    for (const concurrency of [0, 1.5, 65])
      await expect(createTestKit({ tools: [job as never], concurrency })).rejects.toThrow(RangeError);
    const kit = await createTestKit({ tools: [job as never] });
    try {
      await kit.start('job', { n: 1 });
      await kit.start('job', { n: 2 });
      await kit.settle({ advance: true });
      // A sleep frees the worker: the second starts while the first sleeps, each run on its own.
      expect(log).toEqual(['start 1', 'start 2', 'end 1', 'end 2']);
    } finally {
      await kit.close();
    }
  });

  it("a slot freed by cancelling its holder (hold: 'task') lets the waiting task run at the next settle", async () => {
    const log: string[] = [];
    const deploy = defineTool<{ n: number }>({
      name: 'deploy',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      task: { support: 'required', concurrency: { limit: 1, key: 'customer:acme', hold: 'task' } },
      handler: async ({ n }, ctx) => {
        await ctx.step('build', () => void log.push(`build ${n}`));
        await ctx.sleep('soak', 60_000);
        await ctx.step('ship', () => void log.push(`ship ${n}`));
        return textResult(`deployed ${n}`);
      },
    });
    const kit = await createTestKit({ tools: [deploy as never] });
    try {
      const first = await kit.start('deploy', { n: 1 });
      const second = await kit.start('deploy', { n: 2 });
      await kit.settle();
      expect(log).toEqual(['build 1']); // the first holds the slot through its sleep
      expect((await second.get()).statusMessage).toBe(WAITING);
      await first.cancel();
      await kit.settle();
      expect(log).toEqual(['build 1', 'build 2']);
      await kit.settle({ advance: true });
      expect(log).toEqual(['build 1', 'build 2', 'ship 2']);
      expect((await first.get()).status).toBe('cancelled');
      expect((await second.get()).status).toBe('completed');
    } finally {
      await kit.close();
    }
  });
});

describe('priorities in a kit run', () => {
  const order = async (allowCallerPriority: boolean): Promise<number[]> => {
    const ran: number[] = [];
    const job = defineTool<{ n: number }>({
      name: 'job',
      inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      task: { support: 'required', priority: (a) => (a.n === 2 ? 10 : 0) },
      handler: async ({ n }) => {
        ran.push(n);
        return textResult('ok');
      },
    });
    const kit = await createTestKit({ tools: [job as never], allowCallerPriority });
    try {
      await kit.start('job', { n: 1 });
      await kit.start('job', { n: 2 });
      await kit.start('job', { n: 3 }, { priority: 50 });
      await kit.settle();
      return ran;
    } finally {
      await kit.close();
    }
  };

  it('runs the caller’s tasks of the highest priority first: the tool’s, or the caller’s where allowed', async () => {
    expect(await order(false)).toEqual([2, 1, 3]);
    expect(await order(true)).toEqual([3, 2, 1]);
  });
});
