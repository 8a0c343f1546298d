import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type Task } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../protocol/types.js';
import { TASKS_EXTENSION } from '../wire/meta-keys.js';
import {
  answerOf,
  asksForTask,
  createSessionTasks,
  followSessionTask,
  taskCreated,
  type SessionTasks,
  type TaskParts,
} from './session-tasks.js';
import { UpstreamTaskLostError, type UpstreamTarget } from './upstream.js';

const TASK_ID = 'a'.repeat(32);
const task = (status: Task['status'], extra: Partial<Task> = {}): Task => ({
  taskId: TASK_ID,
  status,
  ttl: 60_000,
  createdAt: '2026-12-06T00:00:00.000Z',
  lastUpdatedAt: '2026-12-06T00:00:00.000Z',
  pollInterval: 1,
  ...extra,
});

type Step = Task | Error;

/**
 * A session's client as following uses it: tasks/get answers `states` in turn (the last one again once they run
 * out; an Error is thrown), tasks/result answers `payload` (or throws it).
 */
function fakeClient(states: Step[], payload: JsonObject | Error = {}, capabilities: JsonObject = {}) {
  const seen = { gets: 0, results: 0, push: undefined as undefined | ((note: unknown) => void) };
  const client = {
    getServerCapabilities: () => capabilities,
    setNotificationHandler: (_schema: unknown, handler: (note: unknown) => void) => (seen.push = handler),
    experimental: {
      tasks: {
        getTask: async () => {
          const state = states[Math.min(seen.gets++, states.length - 1)] as Step;
          if (state instanceof Error) throw state;
          return state;
        },
        getTaskResult: async () => {
          seen.results++;
          if (payload instanceof Error) throw payload;
          return payload;
        },
      },
    },
  };
  return { client: client as unknown as Client, seen };
}

const stdio: UpstreamTarget = { kind: 'stdio', command: 'node', args: [] };

function setUp(client: Client | undefined, target: UpstreamTarget = stdio, callTimeoutMs = 60_000) {
  const tasks: SessionTasks = createSessionTasks();
  if (client !== undefined) tasks.add(client, undefined);
  const parts: TaskParts = {
    target,
    name: 'test',
    tasks,
    callTimeoutMs,
    connectTimeoutMs: 1_000,
    log: () => undefined,
  };
  const created = client === undefined ? undefined : taskCreated(task('working'), tasks.refOf(client));
  const follow = (onUpdate?: (t: JsonObject) => void) =>
    followSessionTask(parts, TASK_ID, { created, onUpdate, onInput: () => ({}) });
  return { tasks, follow };
}

const TOOL_RESULT = { content: [{ type: 'text', text: 'done' }], structuredContent: { n: 1 } };

describe('asking a 2025-11-25 upstream for a task', () => {
  const withTasks = { tasks: { requests: { tools: { call: {} } } } };
  const gatewayTask = { capabilities: { extensions: { [TASKS_EXTENSION]: {} } } };

  it('asks only when the gateway call is a task, the upstream takes tasks for tools/call, and the tool allows one', () => {
    const { client } = fakeClient([], {}, withTasks);
    const { client: without } = fakeClient([], {}, { tools: {} });
    expect(asksForTask(client, { ...gatewayTask, taskSupport: 'optional' })).toBe(true);
    expect(asksForTask(client, { ...gatewayTask, taskSupport: 'required' })).toBe(true);
    expect(asksForTask(client, { ...gatewayTask, taskSupport: 'forbidden' })).toBe(false);
    expect(asksForTask(client, { ...gatewayTask })).toBe(false);
    expect(asksForTask(client, { capabilities: {}, taskSupport: 'optional' })).toBe(false);
    expect(asksForTask(without, { ...gatewayTask, taskSupport: 'optional' })).toBe(false);
  });

  it("takes the upstream's CreateTaskResult or its result, and refuses a malformed task", () => {
    const ref = { connection: 'c1' };
    expect(answerOf({ task: task('working') }, ref)).toMatchObject({ resultType: 'task', taskId: TASK_ID });
    expect(answerOf(TOOL_RESULT, ref)).toEqual(TOOL_RESULT);
    expect(() => answerOf({ task: { taskId: TASK_ID } }, ref)).toThrow(McpError);
    expect(() => answerOf({ task: task('working', { taskId: 'x'.repeat(1_025) }) }, ref)).toThrow(McpError);
    expect(() => answerOf({ content: 'no' }, ref)).toThrow(/neither a task nor a result/);
  });

  it('records the task in the gateway shape, with the session it belongs to', () => {
    const created = taskCreated(task('working', { pollInterval: 250, statusMessage: 'queued' }), {
      connection: 'c1',
      sessionId: 's1',
    });
    expect(created).toEqual({
      resultType: 'task',
      taskId: TASK_ID,
      status: 'working',
      statusMessage: 'queued',
      pollIntervalMs: 250,
      connection: 'c1',
      sessionId: 's1',
    });
  });
});

describe('following a 2025-11-25 upstream task', () => {
  it('polls tasks/get until it completes, then gives the tool result of tasks/result without its related-task key', async () => {
    const payload = {
      ...TOOL_RESULT,
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: TASK_ID }, other: 1 },
    };
    const { client, seen } = fakeClient(
      [task('working', { statusMessage: 'step 1' }), task('working'), task('completed')],
      payload,
    );
    const updates: JsonObject[] = [];
    const outcome = await setUp(client).follow((t) => updates.push(t));
    expect(outcome).toEqual({ status: 'completed', result: { ...TOOL_RESULT, _meta: { other: 1 } } });
    expect(updates.map((t) => t.status)).toEqual(['working', 'working', 'completed']);
    expect(seen.results).toBe(1);
  });

  it('wakes on a pushed notifications/tasks/status instead of waiting out a long pollInterval', async () => {
    const { client, seen } = fakeClient(
      [task('working', { pollInterval: 600_000 }), task('completed')],
      TOOL_RESULT,
    );
    const { follow } = setUp(client);
    const started = Date.now();
    const following = follow();
    await new Promise((resolve) => setTimeout(resolve, 50));
    seen.push?.({ method: 'notifications/tasks/status', params: task('completed') });
    expect(await following).toMatchObject({ status: 'completed' });
    // The poll would have waited POLL_MAX_MS (30 s).
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("gives a failed task's tool error as its result, and a JSON-RPC error of tasks/result as a failure", async () => {
    const toolError = { content: [{ type: 'text', text: 'no' }], isError: true };
    const failedWithResult = fakeClient([task('failed')], toolError).client;
    expect(await setUp(failedWithResult).follow()).toEqual({ status: 'completed', result: toolError });
    const refusal = new McpError(-32603, 'quota exceeded', { left: 0 });
    const failedWithError = fakeClient([task('failed', { statusMessage: 'quota' })], refusal).client;
    expect(await setUp(failedWithError).follow()).toEqual({
      status: 'failed',
      error: { code: -32603, message: 'quota exceeded', data: { left: 0 } },
    });
  });

  it('ends cancelled without asking for a result', async () => {
    const { client, seen } = fakeClient([task('cancelled')]);
    expect(await setUp(client).follow()).toEqual({ status: 'cancelled' });
    expect(seen.results).toBe(0);
  });

  it('loses a task the upstream no longer knows, and one whose stdio session has closed', async () => {
    const unknown = fakeClient([new McpError(ErrorCode.InvalidParams, 'Task not found')]).client;
    await expect(setUp(unknown).follow()).rejects.toBeInstanceOf(UpstreamTaskLostError);
    const { client } = fakeClient([task('working')]);
    const { tasks, follow } = setUp(client);
    tasks.remove(client);
    await expect(follow()).rejects.toThrow(/a stdio upstream's tasks end with its process/);
  });

  it('tries tasks/get again after a failure, and loses the task after callTimeoutMs without news', async () => {
    const flaky = fakeClient([new Error('socket hang up'), task('completed')], TOOL_RESULT);
    expect(await setUp(flaky.client).follow()).toMatchObject({ status: 'completed' });
    expect(flaky.seen.gets).toBe(2);
    const down = fakeClient([new Error('socket hang up')]).client;
    const lost = setUp(down, stdio, 50).follow();
    await expect(lost).rejects.toThrow(/no news of the upstream task/);
    // A task that says it has a result that cannot be read is no news either.
    const unreadable = fakeClient([task('completed')], new Error('bad gateway')).client;
    await expect(setUp(unreadable, stdio, 50).follow()).rejects.toThrow(/no news of the upstream task/);
  });
});
