// What a step keeps: its value as JSON holds it, the same on the first run and on every replay. A step that only has
// side effects (returns nothing) is kept as null; a value JSON cannot hold fails the step for good, naming it, instead
// of leaving the task stuck.
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, textResult } from '../src/index.js';
import { createTestKit, type TestKit } from '../src/testing.js';
import { startDurableServer } from './support/durable-server.js';
import { lastMessage, rpc } from './support/server.js';

const kits: TestKit[] = [];
afterEach(async () => {
  for (const kit of kits.splice(0)) await kit.close();
});
const kitFor = async (tool: ReturnType<typeof defineTool>): Promise<TestKit> => {
  const kit = await createTestKit({ tools: [tool] });
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
