import { afterEach, describe, expect, it, vi } from 'vitest';
import { catalogOf, catalogRetryMs, catalogTools, followCatalog } from './catalog.js';
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

  it('with an upstream that did not answer at start, reads at once and again after 1 s doubling to 30 s, then serves every tool', async () => {
    vi.useFakeTimers();
    const { upstream } = fakeUpstream([tool('a'), tool('b')]);
    let down = true;
    let reads = 0;
    const listTools = upstream.listTools.bind(upstream);
    upstream.listTools = async () => {
      reads++;
      if (down) throw new Error('fetch failed');
      return listTools();
    };
    const added: string[] = [];
    const warned: unknown[] = [];
    const log = (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>): void => {
      if (level === 'warn') warned.push({ message, ...fields });
    };
    const catalog = catalogOf(upstream, [], {}, log);
    expect(catalog.tools).toEqual([]);
    const stop = followCatalog(
      upstream,
      catalog.refresh,
      { addTool: (def) => void added.push(def.name), removeTool: () => true },
      log,
      0,
      { readNow: true },
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(reads).toBe(1);
    // 1 s, 2 s, 4 s, 8 s, 16 s, then 30 s apart.
    const waits = [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000];
    for (const [i, ms] of waits.entries()) {
      await vi.advanceTimersByTimeAsync(ms - 1);
      expect(reads).toBe(i + 1);
      await vi.advanceTimersByTimeAsync(1);
      expect(reads).toBe(i + 2);
    }
    expect(waits.map((_, i) => catalogRetryMs(i + 1))).toEqual(waits);
    expect(added).toEqual([]);
    expect(warned[0]).toMatchObject({ error: 'fetch failed', failures: 1, retryMs: 1_000 });
    down = false;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(added).toEqual(['a', 'b']);
    // Read: no more tries.
    const after = reads;
    await vi.advanceTimersByTimeAsync(120_000);
    expect(reads).toBe(after);
    stop();
  });

  it('stops trying when stopped', async () => {
    vi.useFakeTimers();
    const { upstream } = fakeUpstream([]);
    let reads = 0;
    const stop = followCatalog(
      upstream,
      async () => {
        reads++;
        throw new Error('down');
      },
      { addTool: () => undefined, removeTool: () => true },
      () => undefined,
      0,
      { readNow: true },
    );
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reads).toBe(2);
    stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(reads).toBe(2);
  });
});
