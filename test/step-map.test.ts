// ctx.map: one step per item, at most `concurrency` at once, the results in item order; as a task through the testing
// kit (a crash replayed without running a kept item again, the bound on steps checked before any item runs), and
// within a request on a server.
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, textResult, type MapOptions, type TaskLimits } from '../src/index.js';
import { createTestKit, type TestKit } from '../src/testing.js';
import { startDurableServer } from './support/durable-server.js';
import { lastMessage, rpc } from './support/server.js';

type Result = { isError?: boolean; content: { text: string }[] };
const textOf = (result: unknown): string => (result as Result).content[0]?.text ?? '';

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

/** A tool mapping its `items` to their squares, counting how many bodies run at once. */
function squares(options: MapOptions = {}, support: 'required' | 'never' = 'required') {
  const seen = { running: 0, most: 0, calls: [] as [item: number, index: number, attempt: number][] };
  const tool = defineTool({
    name: 'squares',
    description: 'Squares numbers, a step each',
    inputSchema: { type: 'object', properties: { items: { type: 'array', items: { type: 'number' } } } },
    task: { support },
    handler: async ({ items }: { items: number[] }, ctx) => {
      const out = await ctx.map(
        'square',
        items,
        async (item, index, { attempt }) => {
          seen.calls.push([item, index, attempt]);
          seen.most = Math.max(seen.most, ++seen.running);
          // Later items end first: the results still come back in item order.
          await new Promise((resolve) => setTimeout(resolve, (items.length - index) * 2));
          seen.running--;
          return item * item;
        },
        options,
      );
      return textResult(out.join(','));
    },
  });
  return { tool, seen };
}

describe('ctx.map as a task', () => {
  it('runs a step per item, at most `concurrency` at once, and returns the results in item order', async () => {
    const { tool, seen } = squares({ concurrency: 3 });
    const kit = await kitFor(tool);
    const items = [1, 2, 3, 4, 5, 6, 7];
    const task = await kit.start('squares', { items });
    await kit.settle();
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('1,4,9,16,25,36,49');
    expect(seen.most).toBe(3);
    expect(seen.calls.map(([item, index, attempt]) => [item, index, attempt])).toEqual(
      items.map((item, index) => [item, index, 1]),
    );
    expect(task.stepRuns()).toEqual(Object.fromEntries(items.map((_, i) => [`square[${i}]`, 1])));
  });

  it('runs ten at once by default', async () => {
    const { tool, seen } = squares();
    const kit = await kitFor(tool);
    const task = await kit.start('squares', { items: Array.from({ length: 25 }, (_, i) => i) });
    await kit.settle();
    expect((await task.get()).status).toBe('completed');
    expect(seen.most).toBe(10);
  });

  it('replays the items kept before a crash and runs only the others', async () => {
    const { tool } = squares({ concurrency: 2 });
    const kit = await kitFor(tool);
    const task = await kit.start('squares', { items: [1, 2, 3, 4, 5] });
    kit.crashAfterStep(3, task.id);
    await kit.settle();
    const kept = task.history().steps.map(([name]) => name);
    expect(kept).toHaveLength(3);
    await kit.recover();
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(textOf(done.result)).toBe('1,4,9,16,25');
    // The items kept before the crash did not run again; the one running beside them when the run died (its
    // value never kept) ran again, and the others once.
    const runs = task.stepRuns();
    for (const [name, count] of Object.entries(runs))
      expect([name, count]).toEqual([name, kept.includes(name) ? 1 : count === 2 ? 2 : 1]);
    expect(Object.keys(runs).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `square[${i}]`));
    expect(Object.values(runs).filter((n) => n === 2).length).toBeLessThanOrEqual(1);
  });

  it('retries an item with its own attempts, passing them to fn', async () => {
    const runs: Record<string, number[]> = {};
    const tool = defineTool({
      name: 'flaky_map',
      description: 'Fails the second item once',
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        const out = await ctx.map(
          'item',
          ['a', 'b', 'c'],
          (item, _index, { attempt }) => {
            (runs[item] ??= []).push(attempt);
            if (item === 'b' && attempt === 1) throw new Error('not yet');
            return `${item}${attempt}`;
          },
          { retry: { maxAttempts: 2, initialDelayMs: 1_000, jitter: 0 } },
        );
        return textResult(out.join(','));
      },
    });
    const kit = await kitFor(tool);
    const task = await kit.start('flaky_map');
    await kit.settle({ advance: true });
    const done = await task.get();
    expect(textOf(done.result)).toBe('a1,b2,c1');
    expect(runs).toEqual({ a: [1], b: [1, 2], c: [1] });
  });

  it('refuses a list whose items would pass max-steps-per-task before any item runs', async () => {
    let ran = 0;
    const tool = defineTool({
      name: 'many',
      description: 'Maps more items than the task may keep steps',
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        await ctx.step('first', () => 1);
        await ctx.map('page', [1, 2, 3, 4, 5], () => ++ran);
        return textResult('unreachable');
      },
    });
    const kit = await kitFor(tool, { maxStepsPerTask: 5 });
    const task = await kit.start('many');
    await kit.settle();
    const ended = await task.get();
    expect(ended.status).toBe('completed');
    expect((ended.result as Result).isError).toBe(true);
    expect(textOf(ended.result)).toBe(
      'map "page" was refused before any item ran: its 5 items need a step each, and this task has room for 4 ' +
        'more; map fewer items, or several in each step (max-steps-per-task: 5)',
    );
    expect(ran).toBe(0);
    expect(task.history().steps.map(([name]) => name)).toEqual(['first']);
  });

  it('stops starting items once one fails for good, and throws its error after those running settle', async () => {
    const started: number[] = [];
    const tool = defineTool({
      name: 'failing_map',
      description: 'The second item fails for good',
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        try {
          await ctx.map(
            'item',
            [0, 1, 2, 3, 4],
            async (item) => {
              started.push(item);
              if (item === 1) throw new Error('item 1 broke');
              await new Promise((resolve) => setTimeout(resolve, 20));
              return item;
            },
            { concurrency: 2 },
          );
          return textResult('unreachable');
        } catch (err) {
          return textResult(`caught: ${(err as Error).message}`);
        }
      },
    });
    const kit = await kitFor(tool);
    const task = await kit.start('failing_map');
    await kit.settle();
    expect(textOf((await task.get()).result)).toBe('caught: item 1 broke');
    expect(started).toEqual([0, 1]);
    // The item running beside the failed one kept its value before the map threw.
    expect(task.history().steps).toEqual([['item[0]', 0]]);
  });
});

describe('ctx.map in a recorded history', () => {
  it('replays a recorded map without running an item, and reports a map renamed under it', async () => {
    const { tool, seen } = squares({ concurrency: 2 });
    const kit = await kitFor(tool);
    const task = await kit.start('squares', { items: [2, 3, 4] });
    await kit.settle();
    const history = task.history();
    // Kept in the order the items ended (the later ones first), replayed all the same.
    expect(history.steps.map(([name]) => name).sort()).toEqual(['square[0]', 'square[1]', 'square[2]']);
    const ran = seen.calls.length;
    expect(await kit.replay(history)).toEqual({ ok: true, reached: 'end' });
    expect(seen.calls).toHaveLength(ran);
    const renamed = defineTool({
      ...tool,
      handler: async ({ items }: { items: number[] }, ctx) =>
        textResult((await ctx.map('sq', items, (n) => n * n)).join(',')),
    });
    const other = await kitFor(renamed);
    // The history's next step is the item that ended first.
    const [first] = history.steps[0] ?? [];
    expect(await other.replay(history)).toMatchObject({ ok: false, expected: first, actual: 'sq[0]' });
  });
});

describe('ctx.map within a request', () => {
  it('runs the items in process, at most `concurrency` at once, and returns the results in item order', async () => {
    const { tool, seen } = squares({ concurrency: 2 }, 'never');
    const server = await startDurableServer({ toolSets: [{ tools: [tool] }] });
    try {
      const res = await rpc(server.url, 'tools/call', {
        name: 'squares',
        arguments: { items: [3, 1, 2, 5] },
      });
      const body = lastMessage(res) as { result?: Result };
      expect(body.result?.isError).toBeUndefined();
      expect(textOf(body.result)).toBe('9,1,4,25');
      expect(seen.most).toBe(2);
    } finally {
      await server.close();
    }
  });
});
