// A tool's task.concurrency, task.priority, task.rateLimit and task.debounce are checked when the tool is registered.
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

describe('a tool registered with a rate limit', () => {
  it('is refused at registration when its limit or period is invalid, naming the tool', () => {
    const tool = (limit: number, periodMs: number, key?: string) =>
      defineTool({
        name: 'charge',
        task: { support: 'optional', rateLimit: { limit, periodMs, ...(key === undefined ? {} : { key }) } },
        handler: () => ({ content: [] }),
      });
    expect(() => new Registry([{ tools: [tool(10, 1_000)] }])).not.toThrow();
    expect(() => new Registry([{ tools: [tool(0, 1_000)] }])).toThrow(
      'tool "charge": task.rateLimit: limit must be a whole number from 1 to 1000000',
    );
    expect(() => new Registry([{ tools: [tool(10, 86_400_001)] }])).toThrow(
      'tool "charge": task.rateLimit: periodMs must be a whole number of ms from 1 to 86400000',
    );
    expect(() => new Registry([{ tools: [tool(10, 1_000, 'a\u0007b')] }])).toThrow(
      /tool "charge": task.rateLimit: key/,
    );
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
