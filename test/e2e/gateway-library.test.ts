// createGateway (durable-mcp/gateway) in this process: an SDK v1 server over stdio behind a gateway on a SQLite
// file; a call through it is a task with the upstream's result, and a tool the upstream adds later is served once it
// says its list changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/advanced.js';
import { createSqliteBackend } from '../../src/index.js';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { RunningHttpServer } from '../../src/transport/http/node-server.js';
import { waitUntil } from '../support/admin-api.js';

const UPSTREAM = fileURLToPath(new URL('../fixtures/gateway/upstream-v1.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let dir: string | undefined;
let gateway: Gateway | undefined;
let http: RunningHttpServer | undefined;

afterEach(async () => {
  await http?.close(0);
  await gateway?.close(0);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  http = gateway = dir = undefined;
});

describe('createGateway', () => {
  it('serves the upstream tools as tasks, and a tool the upstream adds once it says its list changed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-lib-'));
    gateway = await createGateway({
      upstream: { kind: 'stdio', command: process.execPath, args: [UPSTREAM] },
      backend: createSqliteBackend({ path: join(dir, 'tasks.db') }),
      catalog: { syncTools: ['add_tool'] },
    });
    http = await gateway.listen({ port: 0 });
    const client = createHttpClient({ url: http.url, capabilities: TASKS });
    const { result: created } = await client.request('tools/call', {
      name: 'slow_sum',
      arguments: { a: 40, b: 2, ms: 0 },
    });
    expect(created).toMatchObject({ resultType: 'task' });
    let task: Record<string, unknown> = {};
    await waitUntil(async () => {
      task = (await client.request('tasks/get', { taskId: created.taskId })).result;
      return task.status === 'completed';
    }, 'the task');
    expect(task.result).toMatchObject({
      content: [{ type: 'text', text: '42' }],
      structuredContent: { sum: 42 },
    });
    // A sync tool answers within the call; the tool it adds upstream is served after the list change.
    const { result: added } = await client.request('tools/call', {
      name: 'add_tool',
      arguments: { name: 'late' },
    });
    expect(added).toMatchObject({ content: [{ type: 'text', text: 'added late' }] });
    await waitUntil(async () => {
      const { result } = await client.request('tools/list', {});
      return (result.tools as { name: string }[]).some((t) => t.name === 'late');
    }, 'the new tool');
  });
});
