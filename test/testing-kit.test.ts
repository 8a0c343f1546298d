// The testing kit (`durable-mcp/testing`), and the demo tools tested through it: time skipped through a durable
// sleep and a retry backoff, input answered, a crash after a step replayed without running that step again, a crash
// inside a step replayed by running its body again, a cancel, starts with an idempotency key, a rate limit on the kit
// clock, and a recorded history replayed against changed code.
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { defineTool, textResult } from '../src/index.js';
import { generateReport } from '../examples/demo/generate-report.js';
import { remindMe } from '../examples/demo/remind-me.js';
import { settlesWithin, text, useTestKits } from './support/test-kits.js';

const kitOf = useTestKits();

let outlineBefore: string | undefined;
beforeAll(() => {
  outlineBefore = process.env.DURABLE_MCP_DEMO_OUTLINE_MS;
  process.env.DURABLE_MCP_DEMO_OUTLINE_MS = '5';
});
afterAll(() => {
  if (outlineBefore === undefined) delete process.env.DURABLE_MCP_DEMO_OUTLINE_MS;
  else process.env.DURABLE_MCP_DEMO_OUTLINE_MS = outlineBefore;
});

describe('the demo tools through the testing kit', () => {
  it('remind_me: skips through the durable sleep and two retry backoffs', async () => {
    const kit = await kitOf({ tools: [remindMe] });
    const task = await kit.start('remind_me', { text: 'stand up', inSeconds: 3_600, flakyAttempts: 2 });
    await kit.settle();
    expect((await task.get()).status).toBe('working');
    expect((await task.get()).statusMessage).toMatch(/^Sleeping until /);
    expect(task.stepRuns()).toEqual({});
    await kit.advance(3_599_000);
    expect(task.stepRuns()).toEqual({});
    await kit.advance(1_000);
    // Due: the first delivery fails and waits 30 s, the second 60 s.
    expect(task.stepRuns()).toEqual({ deliver: 1 });
    expect((await task.get()).statusMessage).toMatch(/^Retrying step "deliver" \(attempt 2 of 5\)/);
    await kit.advance(30_000);
    expect(task.stepRuns()).toEqual({ deliver: 2 });
    await kit.advance(59_999);
    expect(task.stepRuns()).toEqual({ deliver: 2 });
    await kit.advance(1);
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('Reminder: stand up');
    expect(task.stepRuns()).toEqual({ deliver: 3 });
  });

  it('generate_report: input answered, and a crash after the outline replays without preparing it again', async () => {
    const kit = await kitOf({ tools: [generateReport] });
    const task = await kit.start('generate_report', { size: 'medium' });
    kit.crashAfterStep(1, task.id);
    await kit.settle();
    // The run died right after storing its outline: the task is still working, leased by the dead run.
    expect((await task.get()).status).toBe('working');
    expect(task.stepRuns()).toEqual({ outline: 1 });
    await kit.settle();
    expect((await task.get()).status).toBe('working');
    await kit.recover();
    const waiting = await task.get();
    expect(waiting.status).toBe('input_required');
    expect(Object.keys(waiting.inputRequests as object)).toEqual(['approve_outline']);
    expect(task.stepRuns()).toEqual({ outline: 1 });
    await task.answer({ approve_outline: { action: 'accept', content: { approved: true } } });
    await kit.settle();
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe(
      'medium report\n1. Summary: done.\n2. Background: done.\n3. Findings: done.\n4. Next steps: done.',
    );
    expect(task.stepRuns()).toEqual({ outline: 1, write: 1 });
  });

  it('generate_report: a crash inside the write step replays it after the approval: the body runs again', async () => {
    const kit = await kitOf({ tools: [generateReport] });
    const task = await kit.start('generate_report', { size: 'small' });
    // Armed until a run starts that body: the first run stops for approval before it.
    kit.crashDuringStep('write', task.id);
    await kit.settle();
    expect((await task.get()).status).toBe('input_required');
    await task.answer({ approve_outline: { action: 'accept', content: { approved: true } } });
    await kit.settle();
    // The run died inside "write": its result was never stored, the lease is the dead run's.
    expect((await task.get()).status).toBe('working');
    expect(task.stepRuns()).toEqual({ outline: 1, write: 1 });
    expect(task.history().steps.map(([name]) => name)).toEqual(['outline']);
    await kit.recover();
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('small report\n1. Summary: done.\n2. Findings: done.');
    expect(task.stepRuns()).toEqual({ outline: 1, write: 2 });
  });

  it('generate_report: a cancel while it waits for approval ends it', async () => {
    const kit = await kitOf({ tools: [generateReport] });
    const task = await kit.start('generate_report', {});
    await kit.settle();
    expect((await task.get()).status).toBe('input_required');
    await task.cancel();
    expect((await task.get()).status).toBe('cancelled');
    await kit.settle();
    expect(task.stepRuns()).toEqual({ outline: 1 });
  });
});

describe('replaying a recorded history against new code', () => {
  const v1 = defineTool({
    name: 'migrate',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      await ctx.step('apply_schema', () => true);
      ctx.input('confirm', { method: 'elicitation/create', params: { message: 'Go?', requestedSchema: {} } });
      await ctx.step('finish', () => true);
      return textResult('done');
    },
  });
  const renamed = defineTool({
    ...v1,
    handler: async (_args, ctx) => {
      await ctx.step('apply_schema_v2', () => {
        throw new Error('a replay must never run a step body');
      });
      return textResult('done');
    },
  });
  const extended = defineTool({
    ...v1,
    handler: async (_args, ctx) => {
      await ctx.step('apply_schema', () => true);
      ctx.input('confirm', { method: 'elicitation/create', params: { message: 'Go?', requestedSchema: {} } });
      await ctx.step('notify', () => {
        throw new Error('a replay must never run a step body');
      });
      return textResult('done');
    },
  });

  it('reports the non-determinism a rename would cause, and accepts code that only adds steps', async () => {
    const recording = await kitOf({ tools: [v1] });
    const task = await recording.start('migrate');
    await recording.settle();
    await task.answer({ confirm: { action: 'accept', content: {} } });
    await recording.settle();
    expect((await task.get()).status).toBe('completed');
    const history = task.history();
    expect(history.steps.map(([name]) => name)).toEqual(['apply_schema', 'finish']);
    // A fixture: JSON in, JSON out.
    const fixture = JSON.parse(JSON.stringify(history)) as typeof history;

    expect(await (await kitOf({ tools: [v1] })).replay(fixture)).toEqual({ ok: true, reached: 'end' });
    expect(await (await kitOf({ tools: [renamed] })).replay(fixture)).toMatchObject({
      ok: false,
      expected: 'apply_schema',
      actual: 'apply_schema_v2',
    });
    expect(await (await kitOf({ tools: [extended] })).replay(fixture)).toMatchObject({
      ok: false,
      expected: 'finish',
      actual: 'notify',
    });
    // Replayed from before the answer, the added step comes after everything recorded: fine.
    const early = { ...fixture, steps: fixture.steps.slice(0, 1), answers: {} };
    expect(await (await kitOf({ tools: [extended] })).replay(early)).toEqual({ ok: true, reached: 'input' });
    const answered = { ...early, answers: fixture.answers };
    expect(await (await kitOf({ tools: [extended] })).replay(answered)).toEqual({
      ok: true,
      reached: 'new-step',
      step: 'notify',
    });
  });
});

describe('replaying through ctx.patched', () => {
  it('makes the decision as a run would and goes on: old histories keep the old path', async () => {
    const before = defineTool({
      name: 'ship',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        await ctx.step('pack', () => 1);
        await ctx.step('send', () => 2);
        return textResult('shipped');
      },
    });
    const after = defineTool({
      ...before,
      handler: async (_args, ctx) => {
        await ctx.step('pack', () => 1);
        if (await ctx.patched('insure')) await ctx.step('insure', () => 3);
        await ctx.step('send', () => 2);
        return textResult('shipped');
      },
    });
    const recording = await kitOf({ tools: [before] });
    const task = await recording.start('ship');
    await recording.settle();
    expect((await task.get()).status).toBe('completed');
    expect(await (await kitOf({ tools: [after] })).replay(task.history())).toEqual({
      ok: true,
      reached: 'end',
    });
    // A new task of the new code takes the new path.
    const fresh = await kitOf({ tools: [after] });
    const shipped = await fresh.start('ship');
    await fresh.settle();
    expect(shipped.stepRuns()).toEqual({ pack: 1, insure: 1, send: 1 });
  });
});

describe('the kit itself', () => {
  it('refuses a crash point that is not a step count', async () => {
    const kit = await kitOf({ tools: [remindMe] });
    expect(() => kit.crashAfterStep(0)).toThrow(RangeError);
    expect(() => kit.crashDuringStep('')).toThrow(RangeError);
  });

  it('starts with an idempotency key as a client would: the same task again, other arguments refused', async () => {
    const kit = await kitOf({ tools: [remindMe] });
    const args = { text: 'stand up', inSeconds: 60 };
    const first = await kit.start('remind_me', args, { idempotencyKey: 'call-1' });
    const again = await kit.start('remind_me', args, { idempotencyKey: 'call-1' });
    expect(again.id).toBe(first.id);
    await expect(
      kit.start('remind_me', { ...args, inSeconds: 61 }, { idempotencyKey: 'call-1' }),
    ).rejects.toThrow(/idempotency key was already used with different arguments/);
    await expect(kit.start('remind_me', args, { idempotencyKey: '' })).rejects.toThrow(/idempotencyKey/);
    expect((await kit.start('remind_me', args)).id).not.toBe(first.id);
    expect((await kit.start('remind_me', args, { idempotencyKey: 'call-2' })).id).not.toBe(first.id);
  });

  it('holds a rate limit on the kit clock: a second start waits for its reserved time, a sleep resumes at once', async () => {
    const limited = defineTool({
      name: 'send_sms',
      task: { support: 'optional', rateLimit: { limit: 1, periodMs: 60_000 } },
      handler: async (_args, ctx) => {
        await ctx.step('send', () => 'sent');
        await ctx.sleep('settle', 1_000);
        return textResult('done');
      },
    });
    const kit = await kitOf({ tools: [limited] });
    const [first, second] = [await kit.start('send_sms'), await kit.start('send_sms')];
    await kit.settle();
    expect(first.stepRuns()).toEqual({ send: 1 });
    expect(second.stepRuns()).toEqual({});
    expect((await second.get()).statusMessage).toBe('Waiting for the rate limit of key "send_sms" to start.');
    // The first one's sleep ends: it finishes without waiting for the key's next start.
    await kit.advance(1_000);
    expect((await first.get()).status).toBe('completed');
    await kit.advance(58_999);
    expect(second.stepRuns()).toEqual({});
    await kit.advance(1);
    expect(second.stepRuns()).toEqual({ send: 1 });
  });

  it('runs a step with a concurrency limit, and a replay stops at a new one without taking a slot', async () => {
    const charge = defineTool({
      name: 'charge',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        const id = await ctx.step('charge', () => 'ch_1', { concurrency: { key: 'payments', limit: 1 } });
        return textResult(id);
      },
    });
    const kit = await kitOf({ tools: [charge] });
    const task = await kit.start('charge');
    await kit.settle();
    expect(await task.get()).toMatchObject({ status: 'completed' });
    const history = { ...task.history(), steps: [] };
    expect(await (await kitOf({ tools: [charge] })).replay(history)).toEqual({
      ok: true,
      reached: 'new-step',
      step: 'charge',
    });
  });

  it('expires a task past its TTL when the clock passes it', async () => {
    const short = defineTool({
      name: 'short_lived',
      task: { support: 'optional', ttlMs: 60_000 },
      handler: async (_args, ctx) => {
        await ctx.sleep('forever', 3_600_000);
        return textResult('never');
      },
    });
    const kit = await kitOf({ tools: [short] });
    const task = await kit.start('short_lived');
    await kit.settle();
    expect((await task.get()).status).toBe('working');
    await kit.advance(61_000);
    await expect(task.get()).rejects.toThrow();
  });

  it('crashes a run inside a step body: the body is told to stop, its result goes nowhere, nothing is left pending', async () => {
    let calls = 0;
    const seen: boolean[] = [];
    const charge = defineTool({
      name: 'charge',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        const receipt = await ctx.step(
          'charge',
          async ({ signal }) => {
            const call = ++calls;
            if (call === 1) {
              // The dead run's body: it ends once told to, with a value (then an error) nobody may keep.
              await new Promise((resolve) => signal.addEventListener('abort', resolve));
              seen.push(signal.aborted);
              throw new Error(`charge ${call} stopped`);
            }
            return `charge ${call}`;
          },
          { timeoutMs: 60_000 },
        );
        await ctx.step('notify', () => receipt);
        return textResult(receipt);
      },
    });
    const kit = await kitOf({ tools: [charge] });
    const task = await kit.start('charge');
    kit.crashDuringStep('charge');
    await settlesWithin(kit.settle(), 'settle');
    expect(seen).toEqual([true]);
    expect((await task.get()).status).toBe('working');
    expect(task.history().steps).toEqual([]);
    // The attempt's timeout is not left on the clock.
    expect(kit.clock.pending()).toBe(0);
    await settlesWithin(kit.recover(), 'recover');
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('charge 2');
    expect(task.stepRuns()).toEqual({ charge: 2, notify: 1 });
    expect(task.history().steps).toEqual([
      ['charge', 'charge 2'],
      ['notify', 'charge 2'],
    ]);
  });
});
