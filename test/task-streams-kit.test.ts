// ctx.stream in a testing-kit run: chunks appended between steps and inside step bodies are stored once across a
// crash and its replay, the task's bounds refuse what passes them, the result links to the stream, and a reader
// resumes from any offset.
import { describe, expect, it } from 'vitest';
import { defineTool, textResult } from '../src/index.js';
import { createTestKit } from '../src/testing.js';

const story = defineTool<Record<string, never>>({
  name: 'story',
  inputSchema: { type: 'object' },
  task: { support: 'required' },
  handler: async (_args, ctx) => {
    const out = ctx.stream('out');
    await out.append('once');
    const title = await ctx.step('title', () => 'Upon a time');
    await out.append(title);
    await ctx.step('body', async () => {
      await out.append('body 1');
      await out.append('body 2');
      return null;
    });
    await out.append('the end');
    return { content: [{ type: 'text', text: 'done' }, ...out.links()] };
  },
});

describe('ctx.stream in a kit run', () => {
  it('appends in order, links the stream from the result, and reads from any offset', async () => {
    const kit = await createTestKit({ tools: [story as never] });
    try {
      const task = await kit.start('story');
      await kit.settle();
      const all = await task.stream('out');
      expect(all).toEqual({
        chunks: ['once', 'Upon a time', 'body 1', 'body 2', 'the end'],
        nextOffset: 5,
        ended: true,
      });
      expect(await task.stream('out', 3)).toEqual({
        chunks: ['body 2', 'the end'],
        nextOffset: 5,
        ended: true,
      });
      expect(await task.stream('out', 5)).toEqual({ chunks: [], nextOffset: 5, ended: true });
      const view = await task.get();
      expect(view.status).toBe('completed');
      const result = view.result as { content: unknown[] };
      expect(result.content[1]).toEqual({
        type: 'resource_link',
        uri: `durable-mcp://tasks/${task.id}/streams/out`,
        name: 'out',
        mimeType: 'text/plain',
      });
    } finally {
      await kit.close();
    }
  });

  it('a replay after a crash between steps does not repeat the chunks the crashed run appended', async () => {
    const kit = await createTestKit({ tools: [story as never] });
    try {
      const task = await kit.start('story');
      kit.crashAfterStep(1);
      await kit.settle();
      expect(await task.stream('out')).toEqual({ chunks: ['once'], nextOffset: 1, ended: false });
      await kit.recover();
      expect((await task.stream('out')).chunks).toEqual([
        'once',
        'Upon a time',
        'body 1',
        'body 2',
        'the end',
      ]);
      expect(task.stepRuns()).toEqual({ title: 1, body: 1 });
    } finally {
      await kit.close();
    }
  });

  it('a replay skipping a kept step’s body names the handler’s later appends as the crashed run did', async () => {
    const kit = await createTestKit({ tools: [story as never] });
    try {
      const task = await kit.start('story');
      // The crashed run appended everything but the last chunk; the replay skips the body (kept) and its appends.
      kit.crashAfterStep(2);
      await kit.settle();
      expect((await task.stream('out')).chunks).toEqual(['once', 'Upon a time', 'body 1', 'body 2']);
      await kit.recover();
      expect((await task.stream('out')).chunks).toEqual([
        'once',
        'Upon a time',
        'body 1',
        'body 2',
        'the end',
      ]);
      expect(task.stepRuns()).toEqual({ title: 1, body: 1 });
    } finally {
      await kit.close();
    }
  });

  it('a retried attempt of a step appends anew: the failed attempt’s chunks stay before its own', async () => {
    let attempts = 0;
    const tool = defineTool<Record<string, never>>({
      name: 'flaky',
      inputSchema: { type: 'object' },
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        const out = ctx.stream('out');
        await ctx.step(
          'work',
          async () => {
            attempts++;
            await out.append(`try ${attempts}`);
            if (attempts === 1) throw new Error('flaky');
            return null;
          },
          { retry: { maxAttempts: 2, initialDelayMs: 10 } },
        );
        return textResult('ok');
      },
    });
    const kit = await createTestKit({ tools: [tool as never] });
    try {
      const task = await kit.start('flaky');
      await kit.settle({ advance: true });
      expect((await task.get()).status).toBe('completed');
      expect((await task.stream('out')).chunks).toEqual(['try 1', 'try 2']);
    } finally {
      await kit.close();
    }
  });

  it('a crash inside a step body: the body runs again and the stream holds each chunk once', async () => {
    let runs = 0;
    const tool = defineTool<Record<string, never>>({
      name: 'halting',
      inputSchema: { type: 'object' },
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        const out = ctx.stream('out');
        await out.append('start');
        await ctx.step('work', async () => {
          runs++;
          await out.append('a');
          // The first run's process dies here, after one append of the body.
          if (runs === 1) await new Promise((resolve) => setTimeout(resolve, 5));
          await out.append('b');
          return null;
        });
        return textResult('ok');
      },
    });
    const kit = await createTestKit({ tools: [tool as never] });
    try {
      const task = await kit.start('halting');
      kit.crashDuringStep('work');
      await kit.settle();
      await kit.recover();
      expect((await task.get()).status).toBe('completed');
      expect((await task.stream('out')).chunks).toEqual(['start', 'a', 'b']);
    } finally {
      await kit.close();
    }
  });

  it('refuses a chunk past the task’s bounds with a TaskLimitError naming the flag', async () => {
    const tool = defineTool<Record<string, never>>({
      name: 'chatty',
      inputSchema: { type: 'object' },
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        const out = ctx.stream('out');
        for (let i = 0; i < 3; i++) await out.append(`chunk ${i}`);
        return textResult('not reached');
      },
    });
    const kit = await createTestKit({ tools: [tool as never], limits: { maxStreamChunksPerTask: 2 } });
    try {
      const task = await kit.start('chatty');
      await kit.settle();
      const view = await task.get();
      expect(view.status).toBe('completed');
      const text = JSON.stringify(view.result);
      expect(text).toContain('max-stream-chunks-per-task: 2');
      expect((await task.stream('out')).chunks).toEqual(['chunk 0', 'chunk 1']);
    } finally {
      await kit.close();
    }
  });

  it('an append the handler does not wait for is no unhandled rejection when it is refused', async () => {
    const tool = defineTool<Record<string, never>>({
      name: 'careless',
      inputSchema: { type: 'object' },
      task: { support: 'required' },
      handler: async (_args, ctx) => {
        const out = ctx.stream('out');
        void out.append('kept');
        void out.append('refused: past the bound');
        await ctx.step('later', () => null);
        return textResult('done');
      },
    });
    const kit = await createTestKit({ tools: [tool as never], limits: { maxStreamChunksPerTask: 1 } });
    try {
      const task = await kit.start('careless');
      await kit.settle();
      expect((await task.get()).status).toBe('completed');
      expect((await task.stream('out')).chunks).toEqual(['kept']);
    } finally {
      await kit.close();
    }
  });

  it('refuses a bad stream name and a chunk that is not a string', async () => {
    const tool = defineTool<{ bad: string }>({
      name: 'bad',
      inputSchema: { type: 'object', properties: { bad: { type: 'string' } } },
      task: { support: 'required' },
      handler: async ({ bad }, ctx) => {
        if (bad === 'name') ctx.stream('../etc');
        else await ctx.stream('ok').append(42 as unknown as string);
        return textResult('not reached');
      },
    });
    const kit = await createTestKit({ tools: [tool as never] });
    try {
      const a = await kit.start('bad', { bad: 'name' });
      const b = await kit.start('bad', { bad: 'chunk' });
      await kit.settle();
      expect(JSON.stringify((await a.get()).result)).toContain('ctx.stream: the name must be 1 to 100');
      expect(JSON.stringify((await b.get()).result)).toContain('a chunk must be a string');
    } finally {
      await kit.close();
    }
  });
});
