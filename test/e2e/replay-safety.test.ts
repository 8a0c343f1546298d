// Replay safety across deploys: step names used twice in one run are refused; a task whose tool's code changed under
// it (a step renamed or inserted before recorded ones) fails with a non-determinism error instead of running new side
// effects; ctx.patched keeps a task in flight on its old path and sends new tasks down the new one. Each "deploy" is
// a new server on the same store file, with the tool's new code.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/advanced.js';
import { defineTool, textResult, type ToolDefinition } from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { lastMessage, rpc as post } from '../support/server.js';

type Json = Record<string, unknown>;
const TASKS = 'io.modelcontextprotocol/tasks';
const CAPS = { elicitation: {}, extensions: { [TASKS]: {} } };

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-replay-'));
let serving: DurableTestServer | undefined;
/** The store of the current deploy (operators act on it directly here). */
let store: ReturnType<typeof createSqliteTaskStore> | undefined;

afterEach(async () => {
  await serving?.close();
  serving = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Serves `tools` on the store file `file` (a deploy of new code replaces the previous server). */
async function deploy(file: string, tools: ToolDefinition<never>[]): Promise<DurableTestServer> {
  await serving?.close();
  serving = await startDurableServer({
    toolSets: [{ tools }],
    store: () => (store = createSqliteTaskStore({ path: join(dir, file) })),
    worker: { pollMs: 20 },
  });
  return serving;
}

async function rpc(server: DurableTestServer, method: string, params: Json): Promise<Json> {
  const body = lastMessage(await post(server.url, method, params, { caps: CAPS }));
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result as Json;
}

async function until(server: DurableTestServer, taskId: string, done: (t: Json) => boolean): Promise<Json> {
  const deadline = Date.now() + 8_000;
  for (;;) {
    const task = await rpc(server, 'tasks/get', { taskId });
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${JSON.stringify(task)}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ended = (t: Json): boolean => t.status !== 'working' && t.status !== 'input_required';
const waiting = (t: Json): boolean => t.status === 'input_required';

const CONFIRM = {
  method: 'elicitation/create',
  params: { message: 'Go on?', requestedSchema: { type: 'object', properties: {} } },
} as const;

async function answer(server: DurableTestServer, taskId: string): Promise<void> {
  await rpc(server, 'tasks/update', {
    taskId,
    inputResponses: { confirm: { action: 'accept', content: {} } },
  });
}

describe('step names', () => {
  it('a name used twice in one run is refused, naming the step and the loop idiom', async () => {
    const ran: number[] = [];
    const server = await deploy('names.db', [
      defineTool({
        name: 'fetch_three',
        task: { support: 'optional' },
        handler: async (_args, ctx) => {
          const got: number[] = [];
          for (let i = 0; i < 3; i++) got.push(await ctx.step('fetch', () => (ran.push(i), i)));
          return textResult(JSON.stringify(got));
        },
      }),
      defineTool({
        name: 'fetch_numbered',
        task: { support: 'optional' },
        handler: async (_args, ctx) => {
          const got: number[] = [];
          for (let i = 0; i < 3; i++) got.push(await ctx.step(`fetch:${i}`, () => i * 10));
          return textResult(JSON.stringify(got));
        },
      }),
    ]);
    const created = await rpc(server, 'tools/call', { name: 'fetch_three', arguments: {} });
    const done = await until(server, String(created.taskId), ended);
    const result = done.result as { isError?: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain('step "fetch" was already used in this run');
    expect(result.content[0]?.text).toContain('ctx.step(`fetch:${i}`');
    expect(ran).toEqual([0]);
    const numbered = await rpc(server, 'tools/call', { name: 'fetch_numbered', arguments: {} });
    const fine = await until(server, String(numbered.taskId), ended);
    expect((fine.result as { content: { text: string }[] }).content[0]?.text).toBe('[0,10,20]');
    // Without a task (no extension declared), the same rule.
    const sync = lastMessage(
      await post(server.url, 'tools/call', { name: 'fetch_three', arguments: {} }, { caps: {} }),
    );
    expect(JSON.stringify(sync.result)).toContain('step \\"fetch\\" was already used in this run');
  });
});

describe('code changed under a task in flight', () => {
  it('a renamed step fails the task with a non-determinism error, and the renamed body never runs', async () => {
    const applied: string[] = [];
    const v1 = defineTool({
      name: 'migrate',
      version: '1',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        await ctx.step('apply_schema', () => (applied.push('v1'), true));
        ctx.input('confirm', CONFIRM);
        await ctx.step('finish', () => (applied.push('finish'), true));
        return textResult('migrated');
      },
    });
    // The step renamed, and the version not changed (with a new version, this process would leave the task to one
    // that runs version 1: test/e2e/tool-versions.test.ts).
    const v2 = defineTool({
      name: 'migrate',
      version: '1',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        await ctx.step('apply_schema_v2', () => (applied.push('v2'), true));
        ctx.input('confirm', CONFIRM);
        await ctx.step('finish', () => (applied.push('finish'), true));
        return textResult('migrated');
      },
    });
    let server = await deploy('renamed.db', [v1]);
    const taskId = String((await rpc(server, 'tools/call', { name: 'migrate', arguments: {} })).taskId);
    await until(server, taskId, waiting);
    server = await deploy('renamed.db', [v2]);
    await answer(server, taskId);
    const done = await until(server, taskId, ended);
    expect(done.status).toBe('failed');
    const message = (done.error as { message: string }).message;
    expect(message).toContain('Non-determinism');
    expect(message).toContain('tool "migrate" (version 1)');
    expect(message).toContain('asked for step "apply_schema_v2"');
    expect(message).toContain('next step is "apply_schema"');
    expect(done.statusMessage).toBe(message);
    expect(applied).toEqual(['v1']);
    // A new task runs the new code from the start.
    const fresh = String((await rpc(server, 'tools/call', { name: 'migrate', arguments: {} })).taskId);
    await until(server, fresh, waiting);
    await answer(server, fresh);
    expect((await until(server, fresh, ended)).status).toBe('completed');
    expect(applied).toEqual(['v1', 'v2', 'finish']);
  });

  it('an operator resumes a task failed for non-determinism once the fix is deployed, from its history', async () => {
    const applied: string[] = [];
    const migrate = (first: string) =>
      defineTool({
        name: 'migrate',
        version: '1',
        task: { support: 'optional' },
        handler: async (_args, ctx) => {
          await ctx.step(first, () => (applied.push(first), true));
          ctx.input('confirm', CONFIRM);
          await ctx.step('finish', () => (applied.push('finish'), true));
          return textResult('migrated');
        },
      });
    let server = await deploy('resumed.db', [migrate('apply_schema')]);
    const taskId = String((await rpc(server, 'tools/call', { name: 'migrate', arguments: {} })).taskId);
    await until(server, taskId, waiting);
    // A deploy that renamed the step: the task fails, nothing new runs.
    server = await deploy('resumed.db', [migrate('apply_schema_v2')]);
    await answer(server, taskId);
    expect((await until(server, taskId, ended)).status).toBe('failed');
    // The fix (the old name back), then the operator's retry: a new task goes on from the task's history.
    server = await deploy('resumed.db', [migrate('apply_schema')]);
    const retried = await store?.admin?.retry({ tenants: 'all' }, taskId, Date.now());
    if (retried?.ok !== true) throw new Error(`the retry was refused: ${JSON.stringify(retried)}`);
    const done = await until(server, retried.taskId, ended);
    expect(done.status).toBe('completed');
    // The recorded step did not run again, the answer given before was kept, and only the rest ran.
    expect(applied).toEqual(['apply_schema', 'finish']);
    expect((await until(server, taskId, ended)).status).toBe('failed');
  });

  it('a step inserted before recorded ones is caught as well; one added after them runs', async () => {
    const ran: string[] = [];
    const step = (name: string) => (ctx: { step: (n: string, f: () => boolean) => Promise<boolean> }) =>
      ctx.step(name, () => (ran.push(name), true));
    const version = (names: string[], after: string[]) =>
      defineTool({
        name: 'pipeline',
        task: { support: 'optional' },
        handler: async (_args, ctx) => {
          for (const n of names) await step(n)(ctx);
          ctx.input('confirm', CONFIRM);
          for (const n of after) await step(n)(ctx);
          return textResult(ran.join(','));
        },
      });
    let server = await deploy('inserted.db', [version(['a', 'b'], [])]);
    const first = String((await rpc(server, 'tools/call', { name: 'pipeline', arguments: {} })).taskId);
    const second = String((await rpc(server, 'tools/call', { name: 'pipeline', arguments: {} })).taskId);
    await until(server, first, waiting);
    await until(server, second, waiting);
    // Inserted before b: the first task must not run "x".
    server = await deploy('inserted.db', [version(['a', 'x', 'b'], [])]);
    ran.length = 0;
    await answer(server, first);
    const failed = await until(server, first, ended);
    expect(failed.status).toBe('failed');
    expect((failed.error as { message: string }).message).toContain('asked for step "x"');
    expect(ran).toEqual([]);
    // Added after everything recorded: the second task replays a and b, then runs the new step.
    server = await deploy('inserted.db', [version(['a', 'b'], ['c'])]);
    await answer(server, second);
    const done = await until(server, second, ended);
    expect(done.status).toBe('completed');
    expect(ran).toEqual(['c']);
  });
});

describe('ctx.patched', () => {
  it('keeps a task in flight on its old path and sends a new task down the new one, on every replay', async () => {
    const ran: string[] = [];
    const v1 = defineTool({
      name: 'report',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        await ctx.step('gather', () => (ran.push('gather'), true));
        await ctx.step('render', () => (ran.push('render-v1'), true));
        ctx.input('confirm', CONFIRM);
        await ctx.step('send', () => (ran.push('send'), true));
        return textResult('sent');
      },
    });
    const v2 = defineTool({
      name: 'report',
      task: { support: 'optional' },
      handler: async (_args, ctx) => {
        await ctx.step('gather', () => (ran.push('gather'), true));
        if (await ctx.patched('render-as-pdf'))
          await ctx.step('render_pdf', () => (ran.push('render-v2'), true));
        else await ctx.step('render', () => (ran.push('render-v1'), true));
        ctx.input('confirm', CONFIRM);
        if (await ctx.patched('cc-the-team')) await ctx.step('cc', () => (ran.push('cc'), true));
        await ctx.step('send', () => (ran.push('send'), true));
        return textResult('sent');
      },
    });
    let server = await deploy('patched.db', [v1]);
    const old = String((await rpc(server, 'tools/call', { name: 'report', arguments: {} })).taskId);
    await until(server, old, waiting);
    server = await deploy('patched.db', [v2]);
    const fresh = String((await rpc(server, 'tools/call', { name: 'report', arguments: {} })).taskId);
    await until(server, fresh, waiting);
    expect(ran).toEqual(['gather', 'render-v1', 'gather', 'render-v2']);
    ran.length = 0;
    await answer(server, old);
    expect((await until(server, old, ended)).status).toBe('completed');
    // The old task kept its recorded render; past its history, it takes the second new path.
    expect(ran).toEqual(['cc', 'send']);
    ran.length = 0;
    // Another deploy of the same code: the new task's decisions are kept, and replay the same way.
    server = await deploy('patched.db', [v2]);
    await answer(server, fresh);
    expect((await until(server, fresh, ended)).status).toBe('completed');
    expect(ran).toEqual(['cc', 'send']);
  });

  it('is true outside a task', async () => {
    let seen: boolean | undefined;
    const server = await deploy('sync.db', [
      defineTool({
        name: 'quick',
        handler: async (_args, ctx) => {
          seen = await ctx.patched('anything');
          return textResult('ok');
        },
      }),
    ]);
    await rpc(server, 'tools/call', { name: 'quick', arguments: {} });
    expect(seen).toBe(true);
  });
});
