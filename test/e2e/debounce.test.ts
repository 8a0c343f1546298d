// task.debounce over a real port (tools/call): calls of one caller with one key within the window make one task,
// which runs once when the window ends, with the last arguments where the tool replaces them; the result's
// _meta["dev.durable-mcp/debounce"] says which task the call got; another caller gets a task of its own; a tool that
// does not replace refuses other arguments with -32602; once the task ran, the next call opens a new window. Calls that
// join or replace a pending task are not refused by the caller's quota of unfinished tasks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/client/index.js';
import { createHttpClient, type McpHttpClient } from '../../src/advanced.js';
import { defineTool, textResult } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { tokenAuthenticator } from '../support/legacy-client.js';
import { validateMessage } from '../support/schema.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const DEBOUNCE = 'dev.durable-mcp/debounce';
const WINDOW_MS = 2_000;
type Json = Record<string, unknown>;

/** The runs of each tool, with the arguments each got. */
const runs: string[] = [];

const repoArgs = {
  type: 'object',
  properties: { repo: { type: 'string' }, rev: { type: 'number' } },
  required: ['repo', 'rev'],
};
const reindex = defineTool<{ repo: string; rev: number }>({
  name: 'reindex',
  inputSchema: repoArgs,
  task: {
    support: 'required',
    debounce: { key: (args) => `repo:${args.repo}`, periodMs: WINDOW_MS, replace: true },
  },
  handler: ({ repo, rev }) => {
    runs.push(`reindex ${repo}@${rev}`);
    return textResult(`${repo}@${rev}`);
  },
});
const publish = defineTool<{ repo: string; rev: number }>({
  name: 'publish',
  inputSchema: repoArgs,
  task: { support: 'required', debounce: { key: 'publish', periodMs: WINDOW_MS } },
  handler: ({ repo, rev }) => {
    runs.push(`publish ${repo}@${rev}`);
    return textResult(`${repo}@${rev}`);
  },
});

let server: DurableTestServer;
let alice: McpHttpClient;
let bob: McpHttpClient;

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [{ tools: [reindex, publish] }],
    authenticator: tokenAuthenticator({
      'alice-token': { tenant: 'acme', principal: 'alice' },
      'bob-token': { tenant: 'acme', principal: 'bob' },
    }),
    worker: { concurrency: 4, pollMs: 20 },
    // One unfinished task per caller: calls that join or replace a pending task are not refused by it.
    tasks: { tasksGetRate: false, defaultPollIntervalMs: 100, maxActiveTasksPerPrincipal: 1 },
  });
  alice = createHttpClient({ url: server.url, token: 'alice-token', capabilities: TASKS });
  bob = createHttpClient({ url: server.url, token: 'bob-token', capabilities: TASKS });
});
afterAll(() => server.close());

const call = async (c: McpHttpClient, name: string, args: Json): Promise<Json> =>
  (await c.request('tools/call', { name, arguments: args })).result as Json;
const noteOf = (result: Json): unknown => (result._meta as Json | undefined)?.[DEBOUNCE];

/** The task once it ended. */
async function ended(c: McpHttpClient, taskId: string): Promise<Json> {
  const end = Date.now() + 20_000;
  for (;;) {
    const task = (await c.request('tasks/get', { taskId })).result as Json;
    if (task.status !== 'working') return task;
    if (Date.now() > end) throw new Error(`task ${taskId} did not end: ${JSON.stringify(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

const textOf = (task: Json): string =>
  ((task.result as Json).content as Json[]).map((b) => String(b.text)).join('');

describe('task.debounce', () => {
  it('makes one task of a caller’s calls in the window, run once with the last arguments', async () => {
    const first = await call(alice, 'reindex', { repo: 'core', rev: 1 });
    const response = { jsonrpc: '2.0', id: 1, result: first };
    expect(validateMessage(response, { method: 'tools/call', tasksNegotiated: true })).toEqual([]);
    expect(noteOf(first)).toEqual({ joined: false, replaced: false });
    expect(first.status).toBe('working');
    expect(String(first.statusMessage)).toMatch(/^Debounced until \d{4}-\d\d-\d\dT/);
    const taskId = first.taskId as string;

    const same = await call(alice, 'reindex', { rev: 1, repo: 'core' });
    expect(same).toMatchObject({ taskId, _meta: { [DEBOUNCE]: { joined: true, replaced: false } } });
    const later = await call(alice, 'reindex', { repo: 'core', rev: 2 });
    expect(later).toMatchObject({ taskId, _meta: { [DEBOUNCE]: { joined: true, replaced: true } } });
    expect(String(later.statusMessage)).toContain('replaced by a later call');
    // A call that would make a second task is over the quota.
    await expect(call(alice, 'publish', { repo: 'core', rev: 1 })).rejects.toThrow(
      /Too many unfinished tasks/,
    );
    // Another caller with the same key: a task of its own.
    const theirs = await call(bob, 'reindex', { repo: 'core', rev: 7 });
    expect(theirs.taskId).not.toBe(taskId);
    expect(noteOf(theirs)).toEqual({ joined: false, replaced: false });

    expect(textOf(await ended(alice, taskId))).toBe('core@2');
    expect(textOf(await ended(bob, theirs.taskId as string))).toBe('core@7');
    expect(runs.filter((r) => r.startsWith('reindex core'))).toEqual(
      expect.arrayContaining(['reindex core@2', 'reindex core@7']),
    );
    expect(runs.filter((r) => r.startsWith('reindex core'))).toHaveLength(2);

    // The task ran: the next call opens a new window and task.
    const next = await call(alice, 'reindex', { repo: 'core', rev: 2 });
    expect(next.taskId).not.toBe(taskId);
    expect(noteOf(next)).toEqual({ joined: false, replaced: false });
    expect(textOf(await ended(alice, next.taskId as string))).toBe('core@2');
  });

  it('refuses other arguments within the window with -32602 where the tool does not replace them', async () => {
    const first = await call(alice, 'publish', { repo: 'site', rev: 1 });
    const refused = await call(alice, 'publish', { repo: 'site', rev: 2 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(refused).toMatchObject({
      code: -32602,
      message: 'Invalid params: a task with this debounce key is pending with different arguments',
    });
    expect(textOf(await ended(alice, first.taskId as string))).toBe('site@1');
    expect(runs).not.toContain('publish site@2');
  });
});
