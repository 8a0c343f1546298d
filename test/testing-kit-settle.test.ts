// The testing kit's settle and the manual clock: a run that waits on nothing but the clock (a step's timeoutMs) makes
// settle fail saying so instead of hanging, a run waiting on real work is waited for, and settle({ advance: true })
// moves the clock through step timeouts, retry backoffs and sleeps, within a bound.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { defineTool, textResult } from '../src/index.js';
import { BlockedOnClockError } from '../src/testing.js';
import { settlesWithin, text, useTestKits } from './support/test-kits.js';

const kitOf = useTestKits();
const START = Date.UTC(2026, 0, 1);

/** A step body that never ends unless its attempt is stopped (a call that hangs). */
const hang = (signal: AbortSignal): Promise<never> =>
  new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));

const hangs = defineTool({
  name: 'hangs',
  task: { support: 'optional' },
  handler: async (_args, ctx) => {
    const value = await ctx.step('call', ({ signal }) => hang(signal), { timeoutMs: 5_000 });
    return textResult(String(value));
  },
});

describe('settle and the manual clock', () => {
  it('fails, naming the clock, when a step waits on its timeoutMs; the test then moves the clock', async () => {
    const kit = await kitOf({ tools: [hangs] });
    const task = await kit.start('hangs');
    const blocked = await settlesWithin(kit.settle(), 'settle').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(blocked).toBeInstanceOf(BlockedOnClockError);
    expect((blocked as Error).message).toContain(
      'blocked on the manual clock at 2026-01-01T00:00:00.000Z (next timer at 2026-01-01T00:00:05.000Z)',
    );
    expect(blocked).toMatchObject({ now: START, nextTimerAt: START + 5_000 });
    // The run is still in flight: the clock reaching the timeout ends its attempt.
    await settlesWithin(kit.advance(4_999), 'advance').catch(() => undefined);
    expect(task.stepRuns()).toEqual({ call: 1 });
    await settlesWithin(kit.advance(1), 'advance');
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({ isError: true });
    expect(text(done)).toMatch(/call/);
  });

  it('waits for a step doing real work under a timeout: timers and sockets it opened are not the clock', async () => {
    const server = createServer((_req, res) => setTimeout(() => res.end('pong'), 30));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const works = defineTool({
        name: 'works',
        task: { support: 'optional' },
        handler: async (_args, ctx) => {
          const slept = await ctx.step(
            'sleep',
            () => new Promise<string>((resolve) => setTimeout(() => resolve('slept'), 30)),
            { timeoutMs: 5_000 },
          );
          const fetched = await ctx.step('fetch', async () => (await fetch(url)).text(), {
            timeoutMs: 5_000,
          });
          return textResult(`${slept} ${fetched}`);
        },
      });
      const kit = await kitOf({ tools: [works] });
      // Two tasks: the second may reuse the connection the first opened.
      const tasks = [await kit.start('works'), await kit.start('works')];
      await settlesWithin(kit.settle(), 'settle');
      for (const task of tasks) expect(text(await task.get())).toBe('slept pong');
      expect(kit.clock.now()).toBe(START);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('settle({ advance: true }) moves the clock through step timeouts, retry backoffs and a sleep', async () => {
    const flaky = defineTool({
      name: 'flaky',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        const value = await ctx.step(
          'call',
          ({ signal, attempt }) => (attempt < 3 ? hang(signal) : 'answered'),
          { timeoutMs: 5_000, retry: { maxAttempts: 3, initialDelayMs: 1_000, jitter: 0 } },
        );
        await ctx.sleep('cool_down', 60_000);
        return textResult(value);
      },
    });
    const kit = await kitOf({ tools: [flaky] });
    const task = await kit.start('flaky');
    await settlesWithin(kit.settle({ advance: true }), 'settle');
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('answered');
    expect(task.stepRuns()).toEqual({ call: 3 });
    // Timeout 5 s, backoff 1 s, timeout 5 s, backoff 2 s, sleep 60 s.
    expect(kit.clock.now()).toBe(START + 73_000);
  });

  it('settle({ advance: true }) leaves a task waiting for input, and its TTL, alone', async () => {
    const asks = defineTool({
      name: 'asks',
      task: { support: 'optional', ttlMs: 60_000 },
      handler: async (_args, ctx) => {
        const answer = ctx.input('go', {
          method: 'elicitation/create',
          params: { message: 'Go?', requestedSchema: { type: 'object', properties: {} } },
        });
        return textResult(String(answer.action));
      },
    });
    const naps = defineTool({
      name: 'naps',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        await ctx.sleep('nap', 10_000);
        return textResult('rested');
      },
    });
    const kit = await kitOf({ tools: [asks, naps] });
    const asking = await kit.start('asks');
    const napping = await kit.start('naps');
    await settlesWithin(kit.settle({ advance: true }), 'settle');
    expect((await napping.get()).status).toBe('completed');
    expect((await asking.get()).status).toBe('input_required');
    expect(kit.clock.now()).toBe(START + 10_000);
  });

  it('settle({ advance: true }) gives up past maxAdvances on a tool that sleeps for ever', async () => {
    const naps = defineTool({
      name: 'naps',
      task: { support: 'optional', ttlMs: null },
      handler: async (_args, ctx) => {
        for (let i = 0; i < 1_000_000; i++) await ctx.sleep(`nap:${i}`, 1_000);
        return textResult('rested');
      },
    });
    const kit = await kitOf({ tools: [naps] });
    await kit.start('naps');
    await expect(settlesWithin(kit.settle({ advance: true, maxAdvances: 5 }), 'settle')).rejects.toThrow(
      'settle: not settled after 5 clock advances (at 2026-01-01T00:00:05.000Z, next timer at 2026-01-01T00:00:06.000Z)',
    );
    await expect(kit.settle({ advance: true, maxAdvances: -1 })).rejects.toThrow(RangeError);
  });

  it('closes a kit whose settle was blocked on the clock: its run is stopped, no timer is left', async () => {
    const reasons: unknown[] = [];
    const stuck = defineTool({
      name: 'stuck',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        await ctx.step(
          'call',
          // Deaf to its signal: only its timeout ends it.
          ({ signal }) =>
            new Promise<never>(() => signal.addEventListener('abort', () => reasons.push(signal.reason))),
          { timeoutMs: 5_000 },
        );
        return textResult('never');
      },
    });
    const kit = await kitOf({ tools: [stuck] });
    await kit.start('stuck');
    await expect(settlesWithin(kit.settle(), 'settle')).rejects.toBeInstanceOf(BlockedOnClockError);
    expect(kit.clock.pending()).toBe(1);
    await settlesWithin(kit.close(), 'close');
    expect(reasons).toEqual(['shutdown']);
    expect(kit.clock.pending()).toBe(0);
  });
});
