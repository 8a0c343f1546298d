import { describe, expect, it } from 'vitest';
import { defineTool } from '../protocol/define.js';
import { textResult } from '../protocol/types.js';
import { UsageError } from './args.js';
import { parseToolConcurrency, withToolConcurrency } from './tool-concurrency.js';

const handler = () => textResult('ok');
const sync = defineTool({ name: 'sync', task: { support: 'required' }, handler });
const keyed = defineTool({
  name: 'keyed',
  task: { support: 'optional', concurrency: { limit: 5, key: 'shared' } },
  handler,
});
const plain = defineTool({ name: 'plain', handler });
const sets = [{ tools: [sync, keyed, plain] }];

describe('--tool-concurrency', () => {
  it('reads TOOL=N entries, a later one for a tool winning', () => {
    expect([...parseToolConcurrency(['sync=2', 'keyed=3', 'sync=4'])]).toEqual([
      ['sync', 4],
      ['keyed', 3],
    ]);
  });

  it.each(['sync', 'sync=0', 'sync=-1', 'sync=1.5', '=2', 'sync=x', 'sync=2000000'])(
    'refuses %s',
    (entry) => {
      expect(() => parseToolConcurrency([entry])).toThrow(UsageError);
    },
  );

  it('sets a limit keyed by the tool, and overrides a limit keeping its key', () => {
    const [set] = withToolConcurrency(sets, parseToolConcurrency(['sync=2', 'keyed=1']));
    const [s, k, p] = set?.tools ?? [];
    expect(s?.task?.concurrency).toEqual({ limit: 2 });
    expect(k?.task?.concurrency).toEqual({ limit: 1, key: 'shared' });
    expect(p).toBe(plain);
    expect(sync.task?.concurrency).toBeUndefined();
  });

  it('refuses a tool not served, or one that never runs as a task', () => {
    expect(() => withToolConcurrency(sets, new Map([['nope', 1]]))).toThrow(/no tool "nope" is served/);
    expect(() => withToolConcurrency(sets, new Map([['plain', 1]]))).toThrow(/does not run as a task/);
  });
});
