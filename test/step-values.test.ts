// What a step keeps: its value as JSON holds it, the same on the first run and on every replay. A step that only has
// side effects (returns nothing) is kept as null; a value JSON cannot hold fails the step for good, naming it, instead
// of leaving the task stuck.
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, textResult, type TaskLimits } from '../src/index.js';
import { createTestKit, type TestKit } from '../src/testing.js';
import { startDurableServer } from './support/durable-server.js';
import { lastMessage, rpc } from './support/server.js';

const kits: TestKit[] = [];
afterEach(async () => {
  for (const kit of kits.splice(0)) await kit.close();
});
const kitFor = async (
  tool: ReturnType<typeof defineTool>,
  limits?: Partial<TaskLimits>,
): Promise<TestKit> => {
  const kit = await createTestKit({ tools: [tool], limits });
  kits.push(kit);
  return kit;
};

const CONFIRM = {
  method: 'elicitation/create',
  params: { message: 'Go on?', requestedSchema: { type: 'object', properties: {} } },
} as const;

describe('step values as a task keeps them', () => {
  it('a step that returns nothing runs once and is null on the first run and after the input replay', async () => {
    let sent = 0;
    const seen: unknown[] = [];
    const notify = defineTool({
      name: 'notify',
      description: 'Sends once, then asks to go on',
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        const value = await ctx.step('send', async () => {
          sent++;
        });
        seen.push(value);
        const answer = ctx.input('confirm', CONFIRM);
        return textResult(`sent ${sent}, ${answer.action}`);
      },
    });
    const kit = await kitFor(notify);
    const task = await kit.start('notify');
    await kit.settle();
    expect((await task.get()).status).toBe('input_required');
    await task.answer({ confirm: { action: 'accept', content: {} } });
    await kit.settle();
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(sent).toBe(1);
    expect(task.stepRuns()).toEqual({ send: 1 });
    expect(seen).toEqual([null, null]);
  });

  it('a Date comes back as the same ISO string on the first run and on the replay after a crash', async () => {
    const seen: unknown[] = [];
    const stamp = defineTool({
      name: 'stamp',
      description: 'Keeps a time',
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        const at = await ctx.step('at', () => new Date(Date.UTC(2026, 11, 4)) as unknown as string);
        seen.push(at);
        await ctx.step('after', () => 1);
        return textResult(String(at));
      },
    });
    const kit = await kitFor(stamp);
    const task = await kit.start('stamp');
    kit.crashAfterStep(1, task.id);
    await kit.settle();
    await kit.recover();
    await kit.settle();
    expect((await task.get()).status).toBe('completed');
    expect(task.stepRuns()).toEqual({ at: 1, after: 1 });
    expect(seen).toEqual(['2026-12-04T00:00:00.000Z', '2026-12-04T00:00:00.000Z']);
  });

  it('a value JSON cannot hold ends the task with a tool error at once, naming the step, without retrying', async () => {
    for (const [name, make] of [
      ['big', () => 10n],
      [
        'cycle',
        () => {
          const o: Record<string, unknown> = {};
          o.self = o;
          return o;
        },
      ],
      ['fn', () => () => 1],
    ] as const) {
      const tool = defineTool({
        name: `bad_${name}`,
        description: 'Returns what JSON cannot hold',
        task: { support: 'required' },
        handler: async (_args, ctx) => {
          await ctx.step(name, make as never, { retry: { maxAttempts: 3, initialDelayMs: 10 } });
          return textResult('unreachable');
        },
      });
      const kit = await kitFor(tool);
      const task = await kit.start(`bad_${name}`);
      await kit.settle();
      await kit.advance(1_000);
      // A thrown error is the tool's error: the task completes with it as an isError result.
      const ended = await task.get();
      expect(ended.status).toBe('completed');
      const result = ended.result as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toMatch(new RegExp(`^step "${name}" returned a`));
      expect(task.stepRuns()).toEqual({ [name]: 1 });
    }
  });
});

describe('the bounds on what one task stores', () => {
  type Result = { isError?: boolean; content: { text: string }[] };
  const textOf = (result: unknown): string => (result as Result).content[0]?.text ?? '';

  it('a loop of steps past max-steps-per-task is refused at the next step, before its body runs', async () => {
    let runs = 0;
    const loop = defineTool({
      name: 'loop',
      description: 'Steps for ever',
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        for (let i = 0; i < 1_000; i++) await ctx.step(`page:${i}`, () => ++runs);
        return textResult('unreachable');
      },
    });
    const kit = await kitFor(loop, { maxStepsPerTask: 5 });
    const task = await kit.start('loop');
    await kit.settle();
    const ended = await task.get();
    expect(ended.status).toBe('completed');
    expect((ended.result as Result).isError).toBe(true);
    expect(textOf(ended.result)).toMatch(
      /^step "page:5" was refused: this task has recorded 5 steps, sleeps and patch decisions.*\(max-steps-per-task: 5\)$/,
    );
    // The refused step's body never ran, and nothing past the limit was recorded.
    expect(runs).toBe(5);
    expect(task.history().steps.map(([name]) => name)).toEqual([0, 1, 2, 3, 4].map((i) => `page:${i}`));
  });

  it('counts sleeps as steps, and steps started together, so that none passes the limit', async () => {
    const sleeper = defineTool({
      name: 'sleeper',
      description: 'Sleeps in a loop, then steps in parallel',
      inputSchema: { type: 'object', properties: { parallel: { type: 'boolean' } } },
      task: { support: 'required' },
      handler: async ({ parallel }: { parallel?: boolean }, ctx) => {
        if (parallel === true) {
          const outcomes = await Promise.allSettled(
            [0, 1, 2, 3, 4].map((i) => ctx.step(`fan:${i}`, () => i)),
          );
          return textResult(outcomes.map((o) => o.status).join(','));
        }
        for (let i = 0; ; i++) await ctx.sleep(`tick:${i}`, 1_000);
      },
    });
    const kit = await kitFor(sleeper, { maxStepsPerTask: 3 });
    const loop = await kit.start('sleeper');
    await kit.settle({ advance: true });
    const ended = await loop.get();
    expect(textOf(ended.result)).toMatch(/^sleep "tick:3" was refused: .*\(max-steps-per-task: 3\)$/);
    expect(loop.history().steps).toHaveLength(3);

    const fan = await kit.start('sleeper', { parallel: true });
    await kit.settle();
    expect(textOf((await fan.get()).result)).toBe('fulfilled,fulfilled,fulfilled,rejected,rejected');
    expect(fan.history().steps).toHaveLength(3);
  });

  it('a step value over max-step-bytes fails the step for good, naming it: never stored, never retried', async () => {
    let runs = 0;
    const big = defineTool({
      name: 'big',
      description: 'Returns too much',
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        await ctx.step('small', () => 'fits');
        await ctx.step('page', () => 'x'.repeat(2_000 + runs++), { retry: { maxAttempts: 5 } });
        return textResult('unreachable');
      },
    });
    const kit = await kitFor(big, { maxStepBytes: 1_024 });
    const task = await kit.start('big');
    await kit.settle({ advance: true });
    const ended = await task.get();
    expect(ended.status).toBe('completed');
    expect(textOf(ended.result)).toBe(
      `step "page" returned 2002 bytes of JSON, over the limit for a step's value (max-step-bytes: 1024)`,
    );
    expect(task.stepRuns()).toEqual({ small: 1, page: 1 });
    expect(task.history().steps).toEqual([['small', 'fits']]);
  });

  it('a result over max-result-bytes fails the task with the named error, and is not stored', async () => {
    const wordy = defineTool({
      name: 'wordy',
      description: 'Answers too much',
      task: { support: 'required' },
      handler: async () => textResult('x'.repeat(3_000)),
    });
    const kit = await kitFor(wordy, { maxResultBytes: 2_048 });
    const task = await kit.start('wordy');
    await kit.settle();
    const ended = await task.get();
    expect(ended.status).toBe('failed');
    expect(ended.error).toEqual({
      code: -32603,
      message: expect.stringMatching(/^the result is \d+ bytes, over the limit \(max-result-bytes: 2048\)$/),
    });
    expect(ended.result).toBeUndefined();
  });

  it('an input request or a status message over max-result-bytes is refused where the handler makes it', async () => {
    const chatty = defineTool({
      name: 'chatty',
      description: 'Says or asks too much',
      inputSchema: { type: 'object', properties: { ask: { type: 'boolean' } } },
      task: { support: 'required' },
      handler: async ({ ask }: { ask?: boolean }, ctx) => {
        const long = 'x'.repeat(3_000);
        if (ask !== true) await ctx.status(long);
        ctx.input('confirm', { ...CONFIRM, params: { ...CONFIRM.params, message: long } });
        return textResult('unreachable');
      },
    });
    const kit = await kitFor(chatty, { maxResultBytes: 2_048 });
    const status = await kit.start('chatty');
    const asking = await kit.start('chatty', { ask: true });
    await kit.settle();
    expect(textOf((await status.get()).result)).toMatch(
      /^the status message is 3000 bytes, over the limit \(max-result-bytes: 2048\)$/,
    );
    const asked = await asking.get();
    expect(asked.status).toBe('completed');
    expect(textOf(asked.result)).toMatch(/^input request "confirm" is \d+ bytes, over the limit/);
  });
  it("keeps 16 384 characters of a thrown error's message and stack", async () => {
    const shouty = defineTool({
      name: 'shouty',
      description: 'Throws a long message',
      task: { support: 'required' },
      handler: async () => {
        throw new Error('x'.repeat(50_000));
      },
    });
    const kit = await kitFor(shouty);
    const task = await kit.start('shouty');
    await kit.settle();
    expect(textOf((await task.get()).result)).toBe(`${'x'.repeat(16_384)}… (33616 more characters)`);
  });
});

describe('step values within a request (no task)', () => {
  it('are the same as a task would keep: nothing is null, a BigInt is an error naming the step', async () => {
    const inline = defineTool({
      name: 'inline',
      description: 'Steps without a task',
      inputSchema: { type: 'object', properties: { big: { type: 'boolean' } } },
      handler: async ({ big }: { big?: boolean }, ctx) => {
        const nothing = await ctx.step('nothing', () => undefined as never);
        if (big === true) await ctx.step('big', () => 10n as never);
        return textResult(JSON.stringify(nothing));
      },
    });
    const server = await startDurableServer({ toolSets: [{ tools: [inline] }] });
    try {
      const call = async (args: Record<string, unknown>) =>
        lastMessage(await rpc(server.url, 'tools/call', { name: 'inline', arguments: args }));
      const ok = await call({});
      expect(JSON.stringify(ok)).toContain('"text":"null"');
      const bad = await call({ big: true });
      expect(JSON.stringify(bad)).toContain('step \\"big\\" returned');
    } finally {
      await server.close();
    }
  });
});

describe('step values within a request (no task), under max-step-bytes', () => {
  it('fail the step as in a task, naming it and the limit', async () => {
    const inline = defineTool({
      name: 'inline_big',
      description: 'A large step without a task',
      handler: async (_args, ctx) => {
        await ctx.step('page', () => 'x'.repeat(2_000));
        return textResult('unreachable');
      },
    });
    const server = await startDurableServer({
      toolSets: [{ tools: [inline] }],
      limits: { maxStepBytes: 1_024 },
    });
    try {
      const reply = lastMessage(await rpc(server.url, 'tools/call', { name: 'inline_big', arguments: {} }));
      expect(reply.result).toMatchObject({
        isError: true,
        content: [
          {
            type: 'text',
            text: `step "page" returned 2002 bytes of JSON, over the limit for a step's value (max-step-bytes: 1024)`,
          },
        ],
      });
    } finally {
      await server.close();
    }
  });
});
