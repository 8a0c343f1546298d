// A tool's task.concurrency, task.priority and task.debounce are checked when the tool is registered.
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

describe('a tool registered with a priority', () => {
  it('is refused at registration when its priority is not a whole number from -100 to 100', () => {
    const tool = (priority: number) =>
      defineTool({
        name: 'report',
        task: { support: 'optional', priority },
        handler: () => ({ content: [] }),
      });
    expect(() => new Registry([{ tools: [tool(100)] }])).not.toThrow();
    expect(() => new Registry([{ tools: [tool(101)] }])).toThrow(
      'tool "report": task.priority must be a whole number from -100 to 100',
    );
    expect(() => new Registry([{ tools: [tool(0.5)] }])).toThrow(/task.priority/);
  });
});

describe('a tool registered with a debounce window', () => {
  it('is refused at registration when its window or key is invalid, naming the tool', () => {
    const tool = (periodMs: number, key = 'inbox') =>
      defineTool({
        name: 'sync',
        task: { support: 'optional', debounce: { key, periodMs } },
        handler: () => ({ content: [] }),
      });
    expect(() => new Registry([{ tools: [tool(1_000)] }])).not.toThrow();
    expect(() => new Registry([{ tools: [tool(0)] }])).toThrow(
      'tool "sync": task.debounce: periodMs must be a whole number of ms from 1 to 86400000',
    );
    expect(() => new Registry([{ tools: [tool(1_000, '')] }])).toThrow(/tool "sync": task.debounce: key/);
  });
});
