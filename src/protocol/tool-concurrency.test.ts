// A tool's task.concurrency is checked when the tool is registered.
import { describe, expect, it } from 'vitest';
import { defineTool } from './define.js';
import { Registry } from './registry.js';

describe('a tool registered with a concurrency limit', () => {
  it('is refused at registration when its limit is invalid, naming the tool', () => {
    const tool = (limit: number, key?: string) =>
      defineTool({
        name: 'deploy',
        task: { support: 'optional', concurrency: { limit, ...(key === undefined ? {} : { key }) } },
        handler: () => ({ content: [] }),
      });
    expect(() => new Registry([{ tools: [tool(1)] }])).not.toThrow();
    expect(() => new Registry([{ tools: [tool(0)] }])).toThrow(
      'tool "deploy": task.concurrency: limit must be a whole number from 1 to 1000000',
    );
    expect(() => new Registry([{ tools: [tool(1, '')] }])).toThrow(/tool "deploy": task.concurrency: key/);
  });
});
