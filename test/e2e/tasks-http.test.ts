// The tasks extension over real HTTP: creation, get/update/cancel, errors, every message checked against the schemas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import conformance from '../../examples/conformance/index.js';
import demo from '../../examples/demo/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { validateMessage } from '../support/schema.js';
import { lastMessage, rpc as wireRpc } from '../support/server.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { elicitation: {}, extensions: { [TASKS]: {} } };
let server: DurableTestServer;
let url: string;
let nextId = 1;

beforeAll(async () => {
  process.env.DURABLE_MCP_DEMO_OUTLINE_MS = '50';
  server = await startDurableServer({
    toolSets: [conformance, demo],
    worker: { leaseMs: 2_000, pollMs: 50 },
    tasks: { tasksGetRate: false },
  });
  url = server.url;
});

afterAll(() => server.close());

interface Reply {
  status: number;
  body: Record<string, unknown>;
  result: Record<string, unknown>;
  error: { code: number; message: string; data?: unknown } | undefined;
}

async function rpc(
  method: string,
  params: Record<string, unknown>,
  caps: Record<string, unknown> = WITH_TASKS,
): Promise<Reply> {
  const id = nextId++;
  const name =
    method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': caps,
        },
      },
    }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.id).toBe(id);
  const problems = validateMessage(body, {
    method,
    tasksNegotiated: caps !== undefined && 'extensions' in caps,
  });
  expect(problems).toEqual([]);
  return {
    status: res.status,
    body,
    result: (body.result as Record<string, unknown>) ?? {},
    error: body.error as Reply['error'],
  };
}

const create = async (name: string, args: Record<string, unknown> = {}): Promise<string> => {
  const r = await rpc('tools/call', { name, arguments: args });
  expect(r.result.resultType).toBe('task');
  return String(r.result.taskId);
};

async function until(
  taskId: string,
  statuses: string[],
  timeoutMs = 8_000,
): Promise<Record<string, unknown>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await rpc('tasks/get', { taskId });
    if (statuses.includes(String(r.result.status))) return r.result;
    if (Date.now() > end) throw new Error(`task ${taskId} stayed ${String(r.result.status)}`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

describe('task creation', () => {
  it('is durable before the handle is returned: 40 concurrent creations are all readable at once', async () => {
    const ids = await Promise.all(
      Array.from({ length: 40 }, (_, i) => create('slow_compute', { seconds: 0.05, label: `c${i}` })),
    );
    expect(new Set(ids).size).toBe(40);
    for (const id of ids) expect(id).toMatch(/^task_[A-Za-z0-9_-]{32}$/);
    const gets = await Promise.all(ids.map((taskId) => rpc('tasks/get', { taskId })));
    for (const g of gets) expect(['working', 'completed']).toContain(g.result.status);
  });

  it('CreateTaskResult is flat with integer ttlMs/pollIntervalMs and ISO timestamps', async () => {
    const r = await rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 0.05 } });
    expect(r.result).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 600_000,
      pollIntervalMs: 200,
    });
    expect(Number.isNaN(Date.parse(String(r.result.createdAt)))).toBe(false);
    for (const key of ['task', 'result', 'error', 'inputRequests', 'requestState'])
      expect(r.result).not.toHaveProperty(key);
  });

  it('optional tools run synchronously without the extension; required ones answer -32021 with the capability', async () => {
    const sync = await rpc('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, {});
    expect(sync.result.resultType).toBe('complete');
    const required = await rpc('tools/call', { name: 'failing_job', arguments: {} }, {});
    expect(required.status).toBe(400);
    expect(required.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
  });

  it('ignores a legacy params.task on a synchronous tool', async () => {
    const r = await rpc('tools/call', { name: 'greet', arguments: { name: 'x' }, task: { ttl: 1000 } });
    expect(r.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, x!' }],
    });
  });
});

describe('tasks/get, tasks/update, tasks/cancel', () => {
  it('reports completed with the original CallToolResult (its own resultType and serverInfo)', async () => {
    const id = await create('slow_compute', { seconds: 0.05, label: 'r' });
    const done = await until(id, ['completed']);
    expect(done.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text' }],
      structuredContent: { seconds: 0.05 },
    });
    expect(
      (done.result as { _meta: Record<string, unknown> })._meta['io.modelcontextprotocol/serverInfo'],
    ).toBeDefined();
  });

  it('reports a JSON-RPC error during the run as failed with error{code,message} and a statusMessage', async () => {
    const id = await create('protocol_error_job');
    const failed = await until(id, ['failed']);
    expect(failed.error).toEqual({ code: -32603, message: 'Simulated protocol error in the job' });
    expect(failed.statusMessage).toMatch(/failed/);
    expect(failed).not.toHaveProperty('result');
  });

  it('partial tasks/update keeps input_required with only the pending key; unknown keys are ignored', async () => {
    const id = await create('multi_input');
    const waiting = await until(id, ['input_required']);
    expect(Object.keys(waiting.inputRequests as object).sort()).toEqual([
      'first_question',
      'second_question',
    ]);
    const yes = { action: 'accept', content: { confirm: true } };
    const ack = await rpc('tasks/update', {
      taskId: id,
      inputResponses: { first_question: yes, nope: { junk: 1 } },
    });
    expect(ack.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    const after = await rpc('tasks/get', { taskId: id });
    expect(after.result.status).toBe('input_required');
    expect(Object.keys(after.result.inputRequests as object)).toEqual(['second_question']);
    await rpc('tasks/update', { taskId: id, inputResponses: { first_question: yes } }); // already answered: ignored
    await rpc('tasks/update', { taskId: id, inputResponses: { second_question: yes } });
    expect((await until(id, ['completed'])).result).toMatchObject({
      content: [{ text: 'Answered 2 questions' }],
    });
  });

  it('rejects a malformed answer to an outstanding key with -32602 and keeps waiting', async () => {
    const id = await create('confirm_delete', { filename: 'a.txt' });
    await until(id, ['input_required']);
    const bad = await rpc('tasks/update', {
      taskId: id,
      inputResponses: { confirm_delete: { action: 'maybe' } },
    });
    expect(bad.error?.code).toBe(-32602);
    expect((await rpc('tasks/get', { taskId: id })).result.status).toBe('input_required');
    await rpc('tasks/cancel', { taskId: id });
  });

  it('cancels a running task cooperatively and acknowledges cancel on terminal tasks', async () => {
    const id = await create('slow_compute', { seconds: 60 });
    await new Promise((r) => setTimeout(r, 100));
    const ack = await rpc('tasks/cancel', { taskId: id });
    expect(Object.keys(ack.result).sort()).toEqual(['_meta', 'resultType']);
    expect((await until(id, ['cancelled', 'completed', 'failed'])).status).toBe('cancelled');
    const again = await rpc('tasks/cancel', { taskId: id });
    expect(again.result.resultType).toBe('complete');
    expect((await rpc('tasks/get', { taskId: id })).result.status).toBe('cancelled');
  });

  it('needs the extension on every task method (-32021 before any lookup)', async () => {
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const r = await rpc(method, { taskId: 'whatever', inputResponses: {} }, {});
      expect(r.status).toBe(400);
      expect(r.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
      });
    }
  });

  it('needs Mcp-Name to mirror the task id on every task method: missing or another id is 400 -32020', async () => {
    const id = await create('confirm_delete', { filename: 'b.txt' });
    await until(id, ['input_required']);
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      for (const mcpName of [undefined, `task_${'C'.repeat(32)}`, id.toLowerCase()]) {
        const answer = { confirm_delete: { action: 'accept', content: { confirm: true } } };
        const res = await wireRpc(
          url,
          method,
          { taskId: id, inputResponses: answer },
          { caps: WITH_TASKS, headers: { 'mcp-name': mcpName } },
        );
        expect(res.status).toBe(400);
        expect((lastMessage(res).error as { code: number }).code).toBe(-32020);
      }
    }
    // None of those reached the task: it still waits, and the mirrored id works.
    expect((await rpc('tasks/get', { taskId: id })).result.status).toBe('input_required');
    expect((await rpc('tasks/cancel', { taskId: id })).error).toBeUndefined();
  });

  it('tells a malformed id from an unknown one, both -32602', async () => {
    const malformed = await rpc('tasks/get', { taskId: 'nope' });
    expect(malformed.error).toMatchObject({ code: -32602, message: 'invalid task id' });
    const unknown = await rpc('tasks/get', { taskId: `task_${'A'.repeat(32)}` });
    expect(unknown.error).toMatchObject({ code: -32602, message: 'Task not found' });
    const cancel = await rpc('tasks/cancel', { taskId: `task_${'B'.repeat(32)}` });
    expect(cancel.error?.code).toBe(-32602);
  });

  it('refuses tasks/result, tasks/list and tasks/status with 404 -32601', async () => {
    for (const method of ['tasks/result', 'tasks/list', 'tasks/status']) {
      const r = await rpc(method, { taskId: 'x' });
      expect(r.status).toBe(404);
      expect(r.error?.code).toBe(-32601);
    }
  });
});

describe('MRTR before creation and the demo report', () => {
  it('test_tool_with_task gathers the name synchronously, then creates the task that uses it', async () => {
    const round1 = await rpc('tools/call', { name: 'test_tool_with_task', arguments: {} });
    expect(round1.result.resultType).toBe('input_required');
    expect(round1.result).not.toHaveProperty('taskId');
    const round2 = await rpc('tools/call', {
      name: 'test_tool_with_task',
      arguments: {},
      inputResponses: { name: { action: 'accept', content: { name: 'Alice' } } },
      requestState: round1.result.requestState,
    });
    expect(round2.result.resultType).toBe('task');
    expect(round2.result).not.toHaveProperty('requestState');
    const done = await until(String(round2.result.taskId), ['completed']);
    expect(JSON.stringify(done.result)).toContain('Alice');
  });

  it('generate_report: working with its status message, input_required approve_outline, then completed', async () => {
    const id = await create('generate_report', { size: 'small' });
    const first = await rpc('tasks/get', { taskId: id });
    expect(first.result.status).toBe('working');
    const waiting = await until(id, ['input_required']);
    // What it is doing now (waiting), not what it did last ("Preparing report outline.").
    expect(waiting.statusMessage).toBe('The task is waiting for input (elicitation/create).');
    const request = (
      waiting.inputRequests as Record<string, { method: string; params: Record<string, unknown> }>
    ).approve_outline;
    expect(request?.method).toBe('elicitation/create');
    expect(request?.params.requestedSchema).toMatchObject({
      properties: { approved: { type: 'boolean' } },
      required: ['approved'],
    });
    await rpc('tasks/update', {
      taskId: id,
      inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
    });
    const done = await until(id, ['completed']);
    expect(done.result).toMatchObject({ structuredContent: { size: 'small', approved: true } });
  });

  it('generate_report: a declined outline completes with a declined result', async () => {
    const id = await create('generate_report', { size: 'large' });
    await until(id, ['input_required']);
    await rpc('tasks/update', { taskId: id, inputResponses: { approve_outline: { action: 'decline' } } });
    const done = await until(id, ['completed']);
    expect(done.result).toMatchObject({ structuredContent: { size: 'large', approved: false } });
  });
});
