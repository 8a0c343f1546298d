// Interop with the official client side of the tasks extension: `@modelcontextprotocol/ext-tasks` drives our
// 2026-07-28 server through a connected official SDK `Client` (`@modelcontextprotocol/client`) over its own
// Streamable HTTP transport — create → input → completion, concurrent input routing, and cancellation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, type FetchLike } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  TaskCancelledError,
  type ApplicationElicitResult,
  type ResolvedInputExchangeContext,
  type TaskEnabledSession,
  type TaskExecutionEvent,
  type TaskState,
} from '@modelcontextprotocol/ext-tasks/client';
import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';
import conformance from '../../examples/conformance/index.js';
import demo from '../../examples/demo/index.js';
import {
  createTransportRequestCoordinator,
  type TransportRequestCoordinator,
} from '../support/sdk-request-coordinator.js';
import { waitFor } from '../support/server.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';

const PROTOCOL_VERSION = '2026-07-28';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const CLIENT_INFO = { name: 'durable-mcp-ext-tasks-interop', version: '0.0.0' };
const CLIENT_CAPABILITIES = { elicitation: { form: {} } };

let server: DurableTestServer;
let url: string;

beforeAll(async () => {
  process.env.DURABLE_MCP_DEMO_OUTLINE_MS = '100';
  server = await startDurableServer({ toolSets: [demo, conformance] });
  url = server.url;
});

afterAll(() => server.close());

interface InputSeen {
  kind: string;
  params: Readonly<Record<string, JsonValue>> | undefined;
  context: ResolvedInputExchangeContext;
}

/** One HTTP POST the SDK transport made: the standard headers it set and the JSON-RPC method in its body. */
interface WireRequest {
  bodyMethod: string | undefined;
  mcpMethod: string | null;
  mcpName: string | null;
  protocolVersion: string | null;
}

interface Connected {
  client: Client;
  session: TaskEnabledSession;
  coordinator: TransportRequestCoordinator;
  inputs: InputSeen[];
  wire: WireRequest[];
  close(): Promise<void>;
}

/** Connects an official SDK Client pinned to 2026-07-28 and wraps it in an ext-tasks session. */
async function connect(
  elicit: (params: Record<string, JsonValue>) => ApplicationElicitResult,
): Promise<Connected> {
  const wire: WireRequest[] = [];
  const recordingFetch: FetchLike = (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string') {
      const headers = new Headers(init.headers);
      const body = JSON.parse(init.body) as { method?: string };
      wire.push({
        bodyMethod: body.method,
        mcpMethod: headers.get('mcp-method'),
        mcpName: headers.get('mcp-name'),
        protocolVersion: headers.get('mcp-protocol-version'),
      });
    }
    return fetch(input, init);
  };
  const client = new Client(CLIENT_INFO, {
    capabilities: CLIENT_CAPABILITIES,
    versionNegotiation: { mode: { pin: PROTOCOL_VERSION } },
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  await client.connect(transport);
  const coordinator = createTransportRequestCoordinator(transport);
  const inputs: InputSeen[] = [];
  const errors: Error[] = [];
  const session = createTaskSessionFromClient(client, {
    endpointId: `durable-mcp:${url}`,
    rawDispatch: coordinator.dispatch,
    v2RequestFraming: {
      protocolVersion: PROTOCOL_VERSION,
      clientInfo: CLIENT_INFO,
      clientCapabilities: CLIENT_CAPABILITIES,
    },
    onInputRequest: createApplicationInputHandler({
      elicitation: (request, context) => {
        inputs.push({ kind: request.kind, params: request.params, context });
        return elicit({ ...request.params });
      },
      sampling: () => {
        throw new Error('no sampling in these tests');
      },
      roots: () => {
        throw new Error('no roots in these tests');
      },
    }),
    onError: (error) => errors.push(error),
  });
  return {
    client,
    session,
    coordinator,
    inputs,
    wire,
    async close() {
      await session.close();
      coordinator.close();
      await client.close();
      expect(errors).toEqual([]);
    },
  };
}

const statusesOf = (events: TaskExecutionEvent<unknown>[]): TaskState[] =>
  events.flatMap((e) => (e.type === 'task' ? [e.task.status] : [e.outcome.status]));

const textOf = (result: unknown): string =>
  ((result as { content?: { type: string; text?: string }[] }).content ?? [])
    .map((block) => (block.type === 'text' ? (block.text ?? '') : ''))
    .join('\n');

describe('interop with @modelcontextprotocol/ext-tasks (official client)', () => {
  it('negotiates 2026-07-28 and sees the tasks extension through the SDK Client', async () => {
    const c = await connect(() => ({ action: 'cancel' }));
    try {
      expect(c.client.getProtocolEra()).toBe('modern');
      expect(c.client.getNegotiatedProtocolVersion()).toBe(PROTOCOL_VERSION);
      expect(c.client.getServerCapabilities()?.extensions?.[TASKS_EXTENSION]).toEqual({});
      expect(c.session.capabilities).toMatchObject({
        execution: true,
        cancellation: true,
        inputResponses: true,
      });
    } finally {
      await c.close();
    }
  });

  it('drives generate_report through create → input (approve_outline) → completion', async () => {
    const c = await connect((params) =>
      String(params.message).startsWith('Approve this outline')
        ? { action: 'accept', content: { approved: true } }
        : { action: 'decline' },
    );
    try {
      const execution = await c.session.callTool('generate_report', { size: 'medium' });
      expect(execution.kind).toBe('task');
      if (execution.kind !== 'task') return;
      expect(execution.handle.operation).toBe('tools/call');
      const taskId = execution.handle.taskId;

      const events: TaskExecutionEvent<unknown>[] = [];
      const { outcome, lastTask } = await execution.settle({ onEvent: (e) => void events.push(e) });
      expect(outcome.status).toBe('completed');
      expect(lastTask).toMatchObject({ taskId, status: 'completed' });
      const statuses = statusesOf(events);
      expect(statuses[0]).toBe('working');
      expect(statuses).toContain('input_required');
      expect(statuses.at(-1)).toBe('completed');

      // The elicitation came through the official input routing, scoped to this task.
      expect(c.inputs).toHaveLength(1);
      expect(c.inputs[0]).toMatchObject({
        kind: 'elicitation',
        params: { message: expect.stringContaining('Approve this outline for a medium report') },
        context: { scope: 'task', delivery: 'task-update', taskId, inputId: 'approve_outline' },
      });

      const result = resultFromTaskOutcome(outcome);
      expect(textOf(result)).toBe(
        'medium report\n1. Summary: done.\n2. Background: done.\n3. Findings: done.\n4. Next steps: done.',
      );
      expect(result).toMatchObject({
        structuredContent: {
          size: 'medium',
          approved: true,
          sections: ['Summary', 'Background', 'Findings', 'Next steps'],
        },
      });

      // What went over the wire: tools/call → tasks/get … → tasks/update (the answer) → tasks/get … (completed).
      const methods = c.coordinator.exchanges.map((x) => (x.request as { method: string }).method);
      expect(methods[0]).toBe('tools/call');
      expect(methods).toContain('tasks/update');
      expect(methods.at(-1)).toBe('tasks/get');
      const update = c.coordinator.exchanges.find(
        (x) => (x.request as { method: string }).method === 'tasks/update',
      );
      expect(update?.request).toMatchObject({
        params: {
          taskId,
          inputResponses: { approve_outline: { action: 'accept', content: { approved: true } } },
        },
      });
      expect(update?.response).toEqual({
        kind: 'result',
        result: expect.objectContaining({ resultType: 'complete' }),
      });
      // The SDK transport set the standard headers our server checks (Mcp-Name mirrors the task id on tasks/*).
      const taskRequests = c.wire.filter((w) => w.bodyMethod?.startsWith('tasks/') === true);
      expect(taskRequests.length).toBeGreaterThan(1);
      for (const w of taskRequests) {
        expect(w).toMatchObject({
          mcpMethod: w.bodyMethod,
          mcpName: taskId,
          protocolVersion: PROTOCOL_VERSION,
        });
      }
      expect(c.wire.find((w) => w.bodyMethod === 'tools/call')).toMatchObject({
        mcpMethod: 'tools/call',
        mcpName: 'generate_report',
      });
    } finally {
      await c.close();
    }
  });

  it('routes each task its own confirm_delete input when two tasks wait at once', async () => {
    const c = await connect((params) =>
      String(params.message) === 'Delete notes.txt?'
        ? { action: 'accept', content: { confirm: true } }
        : { action: 'decline' },
    );
    try {
      const [remove, keep] = await Promise.all([
        c.session.callTool('confirm_delete', { filename: 'notes.txt' }),
        c.session.callTool('confirm_delete', { filename: 'keep.txt' }),
      ]);
      expect([remove.kind, keep.kind]).toEqual(['task', 'task']);
      if (remove.kind !== 'task' || keep.kind !== 'task') return;
      const [removed, kept] = await Promise.all([remove.settle(), keep.settle()]);
      expect(textOf(resultFromTaskOutcome(removed.outcome))).toBe('Deleted notes.txt');
      expect(textOf(resultFromTaskOutcome(kept.outcome))).toBe('Kept keep.txt');

      const byTask = new Map(c.inputs.map((i) => [i.context.taskId, i]));
      expect(byTask.get(remove.handle.taskId)).toMatchObject({
        params: { message: 'Delete notes.txt?' },
        context: { scope: 'task', delivery: 'task-update', inputId: 'confirm_delete' },
      });
      expect(byTask.get(keep.handle.taskId)).toMatchObject({
        params: { message: 'Delete keep.txt?' },
        context: { scope: 'task', delivery: 'task-update', inputId: 'confirm_delete' },
      });
    } finally {
      await c.close();
    }
  });

  it('cancels a running slow_compute task: the execution and the server both end cancelled', async () => {
    const c = await connect(() => ({ action: 'cancel' }));
    try {
      const started = Date.now();
      const execution = await c.session.callTool('slow_compute', { seconds: 60 });
      expect(execution.kind).toBe('task');
      if (execution.kind !== 'task') return;
      const taskId = execution.handle.taskId;
      const controller = c.session.task(taskId);
      await waitFor(async () => (await controller.snapshot()).status === 'working', 5_000);

      await execution.cancel();
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('cancelled');
      expect(() => resultFromTaskOutcome(outcome)).toThrow(TaskCancelledError);

      // The server agrees: tasks/get reports the task cancelled, long before its 60 s would have run out.
      await waitFor(async () => (await controller.snapshot()).status === 'cancelled', 5_000);
      expect(await controller.snapshot()).toMatchObject({ taskId, status: 'cancelled' });
      expect(Date.now() - started).toBeLessThan(15_000);

      const cancel = c.coordinator.exchanges.find(
        (x) => (x.request as { method: string }).method === 'tasks/cancel',
      );
      expect(cancel?.request).toMatchObject({ params: { taskId } });
      expect(cancel?.response).toEqual({
        kind: 'result',
        result: expect.objectContaining({ resultType: 'complete' }),
      });
      expect(c.wire.find((w) => w.bodyMethod === 'tasks/cancel')).toMatchObject({
        mcpMethod: 'tasks/cancel',
        mcpName: taskId,
      });
    } finally {
      await c.close();
    }
  });

  it('returns immediate results (and MRTR input on a plain call) through the same session', async () => {
    const c = await connect((params) =>
      String(params.message) === 'Whom should I greet?'
        ? { action: 'accept', content: { name: 'Ada' } }
        : { action: 'decline' },
    );
    try {
      const echo = await c.session.callTool('echo', { text: 'hello' });
      expect(echo.kind).toBe('immediate');
      expect(textOf(resultFromTaskOutcome(await echo.result()))).toBe('hello');

      const greet = await c.session.callTool('greet_person', {});
      expect(greet.kind).toBe('immediate');
      expect(textOf(resultFromTaskOutcome(await greet.result()))).toBe('Hello, Ada!');
      expect(c.inputs).toEqual([
        expect.objectContaining({
          kind: 'elicitation',
          context: expect.objectContaining({ scope: 'request', delivery: 'request-retry' }),
        }),
      ]);
    } finally {
      await c.close();
    }
  });
});
