import { afterEach, describe, expect, it, vi } from 'vitest';
import { catalogTools, followCatalog } from './catalog.js';
import type { Upstream, UpstreamTool } from './upstream.js';

/** An upstream whose tool list and list-change notifications the test drives. */
function fakeUpstream(tools: UpstreamTool[]) {
  const listeners: (() => void)[] = [];
  const upstream: Upstream = {
    name: 'fake',
    ready: async () => undefined,
    listTools: async () => tools,
    callTool: async () => ({ content: [] }),
    onToolsChanged: (listener) => listeners.push(listener),
    close: async () => undefined,
  };
  return { upstream, changed: () => listeners.forEach((l) => l()) };
}

const tool = (name: string, annotations?: UpstreamTool['annotations']): UpstreamTool => ({
  name,
  inputSchema: { type: 'object' },
  ...(annotations === undefined ? {} : { annotations }),
});

describe('catalogTools', () => {
  it('serves each upstream tool under the prefix, with the task policy its settings give', () => {
    const { upstream } = fakeUpstream([]);
    const defs = catalogTools(upstream, [tool('a'), tool('b'), tool('c', { readOnlyHint: true })], {
      prefix: 'up_',
      taskTools: ['b'],
      syncTools: ['c'],
    });
    expect(defs.map((d) => [d.name, d.task?.support])).toEqual([
      ['up_a', 'optional'],
      ['up_b', 'required'],
      ['up_c', 'never'],
    ]);
    expect(defs[2]?.annotations).toEqual({ readOnlyHint: true });
  });

  it('refuses a tool under a reserved name, naming it and the way out', () => {
    const { upstream } = fakeUpstream([]);
    expect(() => catalogTools(upstream, [tool('task_status')], { reserved: ['task_status'] })).toThrow(
      /"task_status".*--tool-prefix/,
    );
    expect(() => catalogTools(upstream, [tool('x'), tool('x')], {})).toThrow(/twice/);
  });
});

describe('followCatalog', () => {
  afterEach(() => vi.useRealTimers());

  it('reads again on a list change, once more for a change during a read, and on the interval', async () => {
    vi.useFakeTimers();
    const { upstream, changed } = fakeUpstream([]);
    let reads = 0;
    let release: () => void = () => undefined;
    const refresh = () =>
      new Promise<void>((resolve) => {
        reads++;
        release = resolve;
      });
    const stop = followCatalog(
      upstream,
      refresh,
      { addTool: () => undefined, removeTool: () => true },
      () => undefined,
      1_000,
    );
    changed();
    changed(); // during the first read: one more read after it
    changed();
    expect(reads).toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toBe(2);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reads).toBe(3);
    release();
    stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(reads).toBe(3);
  });
});
