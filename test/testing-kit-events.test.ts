// Events from outside a task through the testing kit: ctx.waitForEvent ends the run while it waits (no run in flight),
// an event delivered wakes the task and its payload is kept for replays, an early event is kept for the wait, a
// timeout answers a typed value, a payload its schema refuses is refused, and callback URLs deliver once and refuse
// forged, expired and conflicting deliveries.
import { describe, expect, it } from 'vitest';
import { defineTool, textResult } from '../src/index.js';
import { KIT_PUBLIC_URL } from '../src/testing.js';
import { text, useTestKits } from './support/test-kits.js';

const kitOf = useTestKits();

const approval = defineTool({
  name: 'approval',
  task: { support: 'required' },
  handler: async (_args, ctx) => {
    // Kept as a step, as a tool sends the URL to whoever calls it back.
    await ctx.step('link', () => ctx.callbackUrl('approved', { expiresInMs: 3_600_000 }));
    const event = await ctx.waitForEvent<{ by: string }>('approved', {
      timeoutMs: 60_000,
      schema: { type: 'object', properties: { by: { type: 'string' } }, required: ['by'] },
    });
    await ctx.step('after', () => true);
    return textResult(event.received ? `approved by ${event.payload.by}` : 'timed out');
  },
});

describe('events from outside a task in the testing kit', () => {
  it('waits without a run in flight, and the event delivered wakes the task with its payload', async () => {
    const kit = await kitOf({ tools: [approval] });
    const task = await kit.start('approval');
    await kit.settle();
    const waiting = await task.get();
    expect(waiting.status).toBe('working');
    expect(waiting.statusMessage).toMatch(/^Waiting for event "approved" until /);
    expect(await task.sendEvent('approved', { by: 42 })).toMatchObject({ ok: false, reason: 'invalid' });
    expect(await task.sendEvent('approved', { by: 'ada' })).toEqual({ ok: true, outcome: 'delivered' });
    expect(await task.sendEvent('approved', { by: 'ada' })).toEqual({ ok: true, outcome: 'repeat' });
    expect(await task.sendEvent('approved', { by: 'bob' })).toMatchObject({ ok: false, reason: 'conflict' });
    await kit.settle();
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('approved by ada');
    expect(task.history().steps.map(([name]) => name)).toEqual(['link', 'approved', 'after']);
    // Replayed from its history, the wait gets the kept payload again.
    expect(await kit.replay(task.history())).toEqual({ ok: true, reached: 'end' });
    expect(await kit.sendEvent(task.id, 'later', 1)).toMatchObject({ ok: false, reason: 'ended' });
  });

  it('keeps an event delivered before the wait, and times a wait out with a typed answer', async () => {
    const kit = await kitOf({ tools: [approval] });
    const early = await kit.start('approval');
    expect(await kit.sendEvent(early.id, 'approved', { by: 'eve' })).toEqual({ ok: true, outcome: 'kept' });
    const late = await kit.start('approval');
    await kit.settle();
    expect(text(await early.get())).toBe('approved by eve');
    expect((await late.get()).status).toBe('working');
    await kit.advance(60_000);
    expect(text(await late.get())).toBe('timed out');
    expect(await late.sendEvent('approved', { by: 'ada' })).toMatchObject({ ok: false, reason: 'ended' });
  });

  it('fails the wait when an event kept before it fails its schema', async () => {
    const kit = await kitOf({ tools: [approval] });
    const task = await kit.start('approval');
    expect(await task.sendEvent('approved', { by: 7 })).toEqual({ ok: true, outcome: 'kept' });
    await kit.settle();
    const ended = await task.get();
    expect(JSON.stringify(ended)).toMatch(/arrived before the wait with a payload its schema refuses/);
  });

  it('delivers through a callback URL, and refuses forged and expired ones', async () => {
    const kit = await kitOf({ tools: [approval] });
    const task = await kit.start('approval');
    await kit.settle();
    const url = String(task.history().steps.find(([name]) => name === 'link')?.[1]);
    expect(url.startsWith(`${KIT_PUBLIC_URL}/callbacks/`)).toBe(true);
    const forged = `${url.slice(0, -2)}${url.endsWith('AA') ? 'AB' : 'AA'}`;
    expect(await kit.postCallback(forged, { by: 'mallory' })).toEqual({ ok: false, reason: 'forged' });
    expect(await kit.postCallback(url, { by: 'ada' })).toEqual({ ok: true, outcome: 'delivered' });
    expect(await kit.postCallback(url, { by: 'bob' })).toMatchObject({ ok: false, reason: 'conflict' });
    await kit.settle();
    expect(text(await task.get())).toBe('approved by ada');
    await kit.advance(3_600_000);
    expect(await kit.postCallback(url, { by: 'ada' })).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses ctx.waitForEvent outside a task', async () => {
    const inline = defineTool({
      name: 'inline',
      handler: async (_args, ctx) => {
        await ctx.waitForEvent('x');
        return textResult('never');
      },
    });
    const kit = await kitOf({ tools: [inline, approval] });
    await expect(kit.start('inline')).rejects.toThrow();
  });
});
