// Child tasks (ctx.callTool) through the testing kit: a parent calling children completes in settle, each child runs
// once, a failed child surfaces as ChildTaskFailedError, and a replay after a crash finds the children started.
import { describe, expect, it } from 'vitest';
import { ChildTaskFailedError, defineTool, ErrorCode, ProtocolError, textResult } from '../src/index.js';
import { settlesWithin, text, useTestKits } from './support/test-kits.js';

const kitOf = useTestKits();

function tools() {
  const runs: Record<string, number> = {};
  const double = defineTool({
    name: 'double',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    task: { support: 'optional' },
    handler: async (args: { n: number }) => {
      runs[String(args.n)] = (runs[String(args.n)] ?? 0) + 1;
      // A protocol error fails the task (a plain error would complete it with an isError result).
      if (args.n < 0) throw new ProtocolError(ErrorCode.InvalidParams, `negative: ${args.n}`);
      return textResult(String(args.n * 2));
    },
  });
  const sum = defineTool({
    name: 'sum',
    inputSchema: { type: 'object', properties: { ns: { type: 'array' } }, required: ['ns'] },
    task: { support: 'optional' },
    handler: async (args: { ns: number[] }, ctx) => {
      const results = await Promise.all(
        args.ns.map((n, i) => ctx.callTool('double', { n }, { name: `double-${i}` })),
      );
      const total = results.reduce((t, r) => t + Number((r.content[0] as { text: string }).text), 0);
      return textResult(String(total));
    },
  });
  const careful = defineTool({
    name: 'careful',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      try {
        await ctx.callTool('double', { n: -1 });
        return textResult('no error');
      } catch (err) {
        if (!(err instanceof ChildTaskFailedError)) throw err;
        return textResult(`${err.status}: ${err.error?.message}`);
      }
    },
  });
  return { runs, list: [double, sum, careful] };
}

describe('child tasks in the testing kit', () => {
  it('a parent calling children completes in settle, every child run once', async () => {
    const { runs, list } = tools();
    const kit = await kitOf({ tools: list });
    const task = await kit.start('sum', { ns: [1, 2, 3, 4, 5] });
    await settlesWithin(kit.settle(), 'settle');
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('30');
    expect(runs).toEqual({ 1: 1, 2: 1, 3: 1, 4: 1, 5: 1 });
    // The children's outcomes are kept among the parent's records.
    expect(
      task
        .history()
        .steps.map(([n]) => n)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4].map((i) => `@child/double-${i}`));
    // tasks/get shows the children on the parent, and the parent on each child.
    const children = (done._meta as Record<string, unknown>)['dev.durable-mcp/childTasks'] as {
      taskId: string;
      tool: string;
      status: string;
    }[];
    expect(children).toHaveLength(5);
    expect(children.every((c) => c.tool === 'double' && c.status === 'completed')).toBe(true);
    const first = children[0];
    if (first === undefined) throw new Error('no child');
    const child = await kit.task(first.taskId).get();
    expect((child._meta as Record<string, unknown>)['dev.durable-mcp/parentTask']).toBe(task.id);
    expect(['2', '4', '6', '8', '10']).toContain(text(child));
  });

  it('a child that failed surfaces as ChildTaskFailedError, which the handler may catch', async () => {
    const { list } = tools();
    const kit = await kitOf({ tools: list });
    const task = await kit.start('careful', {});
    await settlesWithin(kit.settle(), 'settle');
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('failed: negative: -1');
  });

  it('a crash after the children started: the replay finds them, none runs twice', async () => {
    const { runs, list } = tools();
    const kit = await kitOf({ tools: list });
    const task = await kit.start('sum', { ns: [7, 8] });
    kit.crashAfterStep(1, task.id);
    await settlesWithin(kit.settle(), 'settle');
    await settlesWithin(kit.recover(), 'recover');
    const done = await task.get();
    expect(done.status).toBe('completed');
    expect(text(done)).toBe('30');
    expect(runs).toEqual({ 7: 1, 8: 1 });
  });
});
