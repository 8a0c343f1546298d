// `durable-mcp event send` against a server in this process (SQLite): delivered as the task's owner, then a repeat,
// then a refused other payload (exit 1), and a usage error for a bad event name (exit 2 by UsageError).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineTool, textResult } from '../../index.js';
import { createDurableMcp, type DurableMcp } from '../../runtime.js';
import { createSqliteTaskStore } from '../../stores/sqlite/task-store.js';
import { createClient } from '../../client/index.js';
import { UsageError } from '../args.js';
import { EXIT } from '../client-flags.js';
import { event } from './event.js';

const waits = defineTool({
  name: 'waits',
  task: { support: 'required' },
  handler: async (_args, ctx) => {
    const got = await ctx.waitForEvent('go', { timeoutMs: 60_000 });
    return textResult(JSON.stringify(got));
  },
});

let mcp: DurableMcp | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await mcp?.close(1_000);
  mcp = undefined;
});

describe('durable-mcp event send', () => {
  it('delivers as the owner, answers a repeat, and exits 1 for another payload', async () => {
    mcp = createDurableMcp({
      toolSets: [{ tools: [waits] }],
      store: createSqliteTaskStore({ path: ':memory:' }),
    });
    const { port } = await mcp.listen({ port: 0 });
    const url = `http://127.0.0.1:${port}/mcp`;
    const client = createClient({ url });
    const call = await client.callTool('waits', {});
    if (call.kind !== 'task') throw new Error('expected a task');
    const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const send = (data: string) => event(['send', call.task.taskId, 'go', '--data', data, '--url', url]);
    expect(await send('{"ok":true}')).toBe(EXIT.ok);
    expect(await send('{"ok":true}')).toBe(EXIT.ok);
    expect(await send('{"ok":false}')).toBe(EXIT.failed);
    expect(out.mock.calls.map((c) => String(c[0]))).toEqual([
      expect.stringMatching(/event "go" for .*: (delivered|kept)/),
      expect.stringMatching(/already delivered with this payload/),
    ]);
    expect(String(err.mock.calls[0]?.[0])).toMatch(/refused \(409\)/);
    const done = await call.task.result();
    expect(JSON.stringify(done)).toContain('received');
    await client.close();
    await expect(event(['send', 'x', 'bad name', '--url', url])).rejects.toThrow(UsageError);
  });
});
