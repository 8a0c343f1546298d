// No request, result or handler ends the process: a result that cannot be serialized is -32603 to its caller alone
// (synchronously, as a task, on the legacy wire), and the server goes on serving everyone else.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope, mcpHeaders, startServe, type ServeProcess } from '../support/cli.js';
import { legacyConnect } from '../support/legacy-client.js';
import { TASKS_EXTENSION } from '../support/protocol.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- replies are read loosely and checked by toMatchObject
type Loose = Record<string, any>;

const TASKS_CAPABILITIES = { extensions: { [TASKS_EXTENSION]: {} } };

const TOOLS = fileURLToPath(new URL('../fixtures/tools/unserializable-tools.mjs', import.meta.url));
const KINDS = ['bigint', 'cycle', 'getter'];

let dir: string;
let serve: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-robust-'));
  serve = await startServe(['--port', '0', '--store', join(dir, 'tasks.db'), '--tools', TOOLS]);
}, 30_000);

afterAll(async () => {
  serve.child.kill('SIGKILL');
  await serve.exited;
  rmSync(dir, { recursive: true, force: true });
});

async function rpc(method: string, params: Record<string, unknown>, caps: Record<string, unknown> = {}) {
  const name = typeof params.name === 'string' ? params.name : (params.taskId as string | undefined);
  const res = await fetch(serve.url, {
    method: 'POST',
    headers: mcpHeaders(method, name),
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope(caps) } }),
  });
  return { status: res.status, body: (await res.json()) as Loose };
}

async function alive(): Promise<void> {
  expect(serve.child.exitCode).toBeNull();
  expect((await fetch(`${serve.origin}/healthz`)).status).toBe(200);
  const listed = await rpc('tools/list', {});
  expect(listed.body.result.tools.length).toBe(KINDS.length * 2);
}

describe('a result that cannot be serialized', () => {
  for (const kind of KINDS) {
    it(`(${kind}) is -32603 to a synchronous caller, and the server goes on`, async () => {
      const { status, body } = await rpc('tools/call', { name: `bad_${kind}`, arguments: {} });
      expect(status).toBe(500);
      // A throwing getter throws while the result is read, before serialization: the generic -32603 then.
      const message = kind === 'getter' ? /Internal error/ : /serializ/;
      expect(body).toMatchObject({ id: 7, error: { code: -32603, message: expect.stringMatching(message) } });
      await alive();
    });

    it(`(${kind}) fails its task with -32603 once, instead of running it again and again`, async () => {
      const created = await rpc(
        'tools/call',
        { name: `bad_${kind}_task`, arguments: {} },
        TASKS_CAPABILITIES,
      );
      const taskId = created.body.result.task?.taskId ?? created.body.result.taskId;
      expect(typeof taskId).toBe('string');
      let task: Loose = {};
      for (let i = 0; i < 200 && !['failed', 'completed'].includes(task.status); i++) {
        await new Promise((r) => setTimeout(r, 50));
        task = (await rpc('tasks/get', { taskId }, TASKS_CAPABILITIES)).body.result;
      }
      // A throwing getter is the tool's own error (read while its result is taken): an isError result.
      if (kind === 'getter') expect(task).toMatchObject({ status: 'completed', result: { isError: true } });
      else expect(task).toMatchObject({ status: 'failed', error: { code: -32603 } });
      await alive();
    });
  }

  it('is -32603 on the 2025-11-25 wire too', async () => {
    const legacy = await legacyConnect(serve.url);
    const error = await legacy.error('tools/call', { name: 'bad_bigint', arguments: {} });
    expect(error.code).toBe(-32603);
    await alive();
  });
});
