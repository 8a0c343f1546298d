// Durable execution over real HTTP: thrown errors kept and shown, step retries on a manual clock, progress as the
// status message, idempotency keys on tools/call. Every message is checked against the schemas.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStaticTokenAuthenticator } from '../../src/auth/static-tokens.js';
import {
  defineTool,
  META_ERROR_REF,
  META_IDEMPOTENCY_KEY,
  ProtocolError,
  textResult,
  type ToolErrorReport,
} from '../../src/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { createManualClock } from '../support/manual-clock.js';
import { validateMessage } from '../support/schema.js';
import { lastMessage, rpc as post } from '../support/server.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const WITH_TASKS = { elicitation: {}, extensions: { [TASKS]: {} } };
const SECRET = 'password=hunter2';

const clock = createManualClock(Date.now());
const reports: ToolErrorReport[] = [];
const progressGate: { open?: () => void } = {};
let server: DurableTestServer;

const tools = [
  defineTool({
    name: 'migrate_db',
    description: 'Snapshots, then migrates; the snapshot always times out',
    task: { support: 'optional' },
    steps: { retry: { maxAttempts: 3, initialDelayMs: 1_000, backoffFactor: 2, jitter: 0 } },
    handler: async (_args, ctx) => {
      await ctx.step('snapshot', () => {
        throw new Error('snapshot: timed out after 500 ms');
      });
      return textResult('migrated');
    },
  }),
  defineTool({
    name: 'private_job',
    description: 'Fails with a message callers must not see',
    task: { support: 'optional' },
    errors: 'private',
    handler: () => {
      throw new Error(`cannot connect with ${SECRET}`);
    },
  }),
  defineTool({
    name: 'protocol_job',
    description: 'Ends with a JSON-RPC error',
    task: { support: 'required' },
    handler: () => {
      throw new ProtocolError(-32000, 'upstream refused the request');
    },
  }),
  defineTool({
    name: 'sync_boom',
    description: 'Never a task; throws',
    handler: () => {
      throw new RangeError('index 7 out of range');
    },
  }),
  defineTool({
    name: 'copy_files',
    description: 'Reports progress, then waits for the test',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      ctx.progress(3, 10, 'Copying');
      await new Promise<void>((resolve) => (progressGate.open = resolve));
      return textResult('copied');
    },
  }),
  defineTool<{ n: number }>({
    name: 'confirmed_deploy',
    description: 'Asks for confirmation before the task exists (MRTR), then sleeps',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    task: {
      support: 'optional',
      prepare: (_args, ctx) => {
        ctx.input('confirm', {
          method: 'elicitation/create',
          params: { message: 'Deploy?', requestedSchema: { type: 'object', properties: {} } },
        });
      },
    },
    handler: async ({ n }, ctx) => {
      await ctx.sleep('settle', 60_000);
      return textResult(`deployed ${n}`);
    },
  }),
  defineTool<{ n: number }>({
    name: 'deploy',
    description: 'Idempotent by key',
    inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    task: { support: 'optional' },
    handler: async ({ n }, ctx) => {
      await ctx.sleep('settle', 60_000);
      return textResult(`deployed ${n}`);
    },
  }),
];

beforeAll(async () => {
  server = await startDurableServer({
    toolSets: [{ tools }],
    clock,
    onToolError: (report) => reports.push(report),
    worker: { leaseMs: 5_000, pollMs: 20 },
  });
});

afterAll(async () => {
  progressGate.open?.();
  await server.close();
});

interface Reply {
  status: number;
  result: Record<string, unknown>;
  error: { code: number; message: string; data?: unknown } | undefined;
}

async function rpc(
  method: string,
  params: Record<string, unknown>,
  options: {
    caps?: Record<string, unknown>;
    meta?: Record<string, unknown>;
    token?: string;
    url?: string;
  } = {},
): Promise<Reply> {
  const caps = options.caps ?? WITH_TASKS;
  const headers = options.token === undefined ? {} : { authorization: `Bearer ${options.token}` };
  const res = await post(options.url ?? server.url, method, params, { caps, meta: options.meta, headers });
  const body = lastMessage(res);
  expect(validateMessage(body, { method, tasksNegotiated: 'extensions' in caps })).toEqual([]);
  return {
    status: res.status,
    result: (body.result as Record<string, unknown>) ?? {},
    error: body.error as Reply['error'],
  };
}

const key = (k: string) => ({ [META_IDEMPOTENCY_KEY]: k });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function poll(
  taskId: string,
  done: (task: Record<string, unknown>) => boolean,
  url?: string,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 8_000;
  for (;;) {
    const got = await rpc('tasks/get', { taskId }, { url });
    if (done(got.result)) return got.result;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${JSON.stringify(got.result)}`);
    await sleep(10);
  }
}

const ended = (t: Record<string, unknown>): boolean =>
  t.status !== 'working' && t.status !== 'input_required';

async function create(
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
): Promise<string> {
  const r = await rpc('tools/call', { name, arguments: args }, { meta });
  expect(r.result.resultType).toBe('task');
  return String(r.result.taskId);
}

describe('errors a tool throws', () => {
  it('end the task completed with isError and the message once the step has used its attempts', async () => {
    const taskId = await create('migrate_db');
    // Two backoff waits (1 s, then 2 s) pass on the manual clock; each is a row in the store, not a timer.
    for (const wait of [1_000, 2_000]) {
      const waiting = await poll(taskId, (t) =>
        String(t.statusMessage).startsWith('Retrying step "snapshot"'),
      );
      expect(waiting.status).toBe('working');
      clock.advance(wait);
      await poll(taskId, (t) => !String(t.statusMessage).includes(`attempt ${wait === 1_000 ? 2 : 3}`));
    }
    const done = await poll(taskId, ended);
    expect(done.status).toBe('completed');
    const result = done.result as Record<string, unknown>;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'snapshot: timed out after 500 ms' }]);
    const ref = (result._meta as Record<string, unknown>)[META_ERROR_REF];
    expect(ref).toMatch(/^err_/);
    expect(done.statusMessage).toBe('The tool failed: snapshot: timed out after 500 ms');

    const kept = await server.runtime.store.inspect?.(taskId, clock.now());
    expect(kept?.failure).toMatchObject({
      ref,
      name: 'Error',
      message: 'snapshot: timed out after 500 ms',
      step: 'snapshot',
      attempt: 3,
    });
    expect(kept?.failure?.stack).toContain('snapshot: timed out after 500 ms');
    expect(kept?.steps).toEqual([
      expect.objectContaining({ name: 'snapshot', done: false, failedAttempts: 3 }),
    ]);
    // Reported once, for the log line.
    expect(reports.filter((r) => r.taskId === taskId)).toEqual([
      { taskId, tool: 'migrate_db', failure: kept?.failure },
    ]);
  });

  it('show only a reference when the tool keeps its errors private, and keep the message for operators', async () => {
    const taskId = await create('private_job');
    const done = await poll(taskId, ended);
    const result = done.result as Record<string, unknown>;
    const ref = String((result._meta as Record<string, unknown>)[META_ERROR_REF]);
    expect(result.content).toEqual([{ type: 'text', text: `The tool failed. Error reference: ${ref}` }]);
    expect(JSON.stringify(done)).not.toContain('hunter2');
    const kept = await server.runtime.store.inspect?.(taskId, clock.now());
    expect(kept?.failure?.message).toBe(`cannot connect with ${SECRET}`);
    expect(kept?.failure?.ref).toBe(ref);
  });

  it('end the task failed when they are protocol errors, and keep them too', async () => {
    const taskId = await create('protocol_job');
    const done = await poll(taskId, ended);
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: -32000, message: 'upstream refused the request' },
    });
    expect((await server.runtime.store.inspect?.(taskId, clock.now()))?.failure?.name).toBe('ProtocolError');
  });

  it('answer a call without a task with an isError result, not a JSON-RPC error', async () => {
    const before = reports.length;
    const r = await rpc('tools/call', { name: 'sync_boom', arguments: {} });
    expect(r.status).toBe(200);
    expect(r.error).toBeUndefined();
    expect(r.result).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'index 7 out of range' }],
    });
    expect(reports.slice(before)).toEqual([
      {
        taskId: undefined,
        tool: 'sync_boom',
        failure: expect.objectContaining({
          name: 'RangeError',
          ref: (r.result._meta as Record<string, unknown>)[META_ERROR_REF],
        }),
      },
    ]);
  });
});

describe('ctx.progress in a task', () => {
  it('sets the status message', async () => {
    const taskId = await create('copy_files');
    const got = await poll(taskId, (t) => t.statusMessage === 'Copying (3/10)');
    expect(got.status).toBe('working');
    progressGate.open?.();
    expect((await poll(taskId, ended)).status).toBe('completed');
  });
});

describe('idempotency keys', () => {
  it('give a retried tools/call the task of the first, and refuse the key with other arguments', async () => {
    const first = await create('deploy', { n: 1 }, key('deploy-1'));
    const again = await rpc('tools/call', { name: 'deploy', arguments: { n: 1 } }, { meta: key('deploy-1') });
    expect(again.result).toMatchObject({ resultType: 'task', taskId: first });
    const other = await rpc('tools/call', { name: 'deploy', arguments: { n: 2 } }, { meta: key('deploy-1') });
    expect(other.error).toMatchObject({
      code: -32602,
      message: 'Invalid params: this idempotency key was already used with different arguments',
    });
    const fresh = await create('deploy', { n: 1 }, key('deploy-2'));
    expect(fresh).not.toBe(first);
  });

  it('join concurrent calls with one key into one task', async () => {
    const replies = await Promise.all(
      Array.from({ length: 8 }, () =>
        rpc('tools/call', { name: 'deploy', arguments: { n: 3 } }, { meta: key('deploy-3') }),
      ),
    );
    expect(new Set(replies.map((r) => r.result.taskId)).size).toBe(1);
  });

  it('give a retried call its task before any new MRTR round of the tool', async () => {
    const call = (extra: Record<string, unknown> = {}) =>
      rpc('tools/call', { name: 'confirmed_deploy', arguments: { n: 5 }, ...extra }, { meta: key('cd-5') });
    const asked = await call();
    expect(asked.result.resultType).toBe('input_required');
    const created = await call({
      inputResponses: { confirm: { action: 'accept', content: {} } },
      requestState: asked.result.requestState,
    });
    expect(created.result.resultType).toBe('task');
    // The answer was lost; the retry carries no answers: it gets the task, not the question again.
    expect((await call()).result).toMatchObject({ resultType: 'task', taskId: created.result.taskId });
  });

  it('refuse a key that is not a string of 1 to 255 characters', async () => {
    for (const bad of [42, '', 'k'.repeat(256)]) {
      const r = await rpc(
        'tools/call',
        { name: 'deploy', arguments: { n: 4 } },
        { meta: key(bad as string) },
      );
      expect(r.error?.code).toBe(-32602);
    }
  });

  it('refuse a new key holding a control character, naming it', async () => {
    for (const [bad, at] of [
      ['deploy\u001b[2J', 'U+001B at 6'],
      ['\u001b]52;c;b3duZWQ=\u0007', 'U+001B at 0'],
      ['deploy\u009b31m', 'U+009B at 6'],
      ['tab\there', 'U+0009 at 3'],
      ['del\u007f', 'U+007F at 3'],
    ]) {
      const r = await rpc(
        'tools/call',
        { name: 'deploy', arguments: { n: 6 } },
        { meta: key(bad as string) },
      );
      expect(r.error).toMatchObject({
        code: -32602,
        message: `Invalid params: _meta["${META_IDEMPOTENCY_KEY}"] must not contain control characters (${at})`,
      });
    }
    // Other characters beyond ASCII are keys like any other.
    expect(await create('deploy', { n: 6 }, key('déploiement-6 ✓'))).toMatch(/^task_/);
  });

  it('are ignored by calls that run without a task', async () => {
    const r = await rpc(
      'tools/call',
      { name: 'sync_boom', arguments: {} },
      { meta: key('whatever'), caps: {} },
    );
    expect(r.result.isError).toBe(true);
  });
});

describe('idempotency keys between principals', () => {
  let authed: DurableTestServer;
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-keys-'));
  beforeAll(async () => {
    const file = join(dir, 'tokens.json');
    writeFileSync(
      file,
      JSON.stringify({
        tokens: [
          { token: 'alice-token-0123456789abcdef', tenant: 'acme', principal: 'alice' },
          { token: 'bob-token-0123456789abcdef00', tenant: 'acme', principal: 'bob' },
        ],
      }),
    );
    authed = await startDurableServer({
      toolSets: [{ tools }],
      clock,
      authenticator: createStaticTokenAuthenticator(file),
    });
  });
  afterAll(async () => {
    await authed.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('let a retried call through at the quota of unfinished tasks: it is no new task', async () => {
    const limited = await startDurableServer({
      toolSets: [{ tools }],
      clock,
      tasks: { tasksGetRate: false, maxActiveTasksPerPrincipal: 1 },
    });
    try {
      const call = (k: string, n: number) =>
        rpc('tools/call', { name: 'deploy', arguments: { n } }, { meta: key(k), url: limited.url });
      const first = await call('q-1', 1);
      expect(first.result.resultType).toBe('task');
      expect((await call('q-2', 2)).error?.code).toBe(429);
      expect((await call('q-1', 1)).result).toMatchObject({
        resultType: 'task',
        taskId: first.result.taskId,
      });
    } finally {
      await limited.close();
    }
  });

  it('are scoped by owner: the same key gives each principal a task of their own, and no hint of the other', async () => {
    const call = (token: string, n: number) =>
      rpc(
        'tools/call',
        { name: 'deploy', arguments: { n } },
        { meta: { [META_IDEMPOTENCY_KEY]: 'shared' }, token, url: authed.url },
      );
    const alice = await call('alice-token-0123456789abcdef', 1);
    const bob = await call('bob-token-0123456789abcdef00', 2);
    expect(alice.result.resultType).toBe('task');
    expect(bob.result.resultType).toBe('task');
    expect(bob.result.taskId).not.toBe(alice.result.taskId);
  });
});

describe('the bounds on what one task stores', () => {
  let bounded: DurableTestServer;
  let wordyRuns = 0;
  beforeAll(async () => {
    bounded = await startDurableServer({
      toolSets: [
        {
          tools: [
            defineTool({
              name: 'tick_forever',
              description: 'Sleeps a millisecond in a loop that never ends',
              task: { support: 'required' },
              handler: async (_args, ctx) => {
                for (let i = 0; ; i++) await ctx.sleep(`tick:${i}`, 1);
              },
            }),
            defineTool({
              name: 'wordy',
              description: 'Returns more than a task may keep',
              task: { support: 'required' },
              handler: async () => {
                wordyRuns++;
                return textResult('x'.repeat(100_000));
              },
            }),
          ],
        },
      ],
      limits: { maxStepsPerTask: 20, maxResultBytes: 65_536 },
      worker: { pollMs: 20 },
    });
  });
  afterAll(() => bounded.close());

  it('end a loop of sleeps at max-steps-per-task with an error naming the limit and the sleep', async () => {
    const taskId = String(
      (await rpc('tools/call', { name: 'tick_forever', arguments: {} }, { url: bounded.url })).result.taskId,
    );
    const done = await poll(taskId, ended, bounded.url);
    expect(done.status).toBe('completed');
    expect(done.result).toMatchObject({
      isError: true,
      content: [
        {
          type: 'text',
          text: expect.stringMatching(/^sleep "tick:20" was refused: .*\(max-steps-per-task: 20\)$/),
        },
      ],
    });
    const kept = await bounded.runtime.store.inspect?.(taskId, Date.now());
    expect(kept?.steps).toHaveLength(20);
  });

  it('fail a task whose result is over max-result-bytes, once, without storing the result', async () => {
    const taskId = String(
      (await rpc('tools/call', { name: 'wordy', arguments: {} }, { url: bounded.url })).result.taskId,
    );
    const done = await poll(taskId, ended, bounded.url);
    expect(done).toMatchObject({
      status: 'failed',
      error: {
        code: -32603,
        message: expect.stringMatching(
          /^the result is \d+ bytes, over the limit \(max-result-bytes: 65536\)$/,
        ),
      },
    });
    expect(wordyRuns).toBe(1);
  });
});

describe('the byte quota of the tasks a principal keeps', () => {
  const LIMIT = 4_096;
  let hoarding: DurableTestServer;
  beforeAll(async () => {
    hoarding = await startDurableServer({
      toolSets: [
        {
          tools: [
            defineTool<{ n: number; pad?: string }>({
              name: 'hoard',
              description: 'Keeps a step value of n bytes',
              inputSchema: {
                type: 'object',
                properties: { n: { type: 'integer' }, pad: { type: 'string' } },
                required: ['n'],
              },
              task: { support: 'required' },
              handler: async ({ n }, ctx) => {
                const page = await ctx.step('page', () => 'x'.repeat(n));
                return textResult(`kept ${page.length}`);
              },
            }),
          ],
        },
      ],
      tasks: { tasksGetRate: false, defaultPollIntervalMs: 100, maxStoredBytesPerPrincipal: LIMIT },
      worker: { pollMs: 20 },
    });
  });
  afterAll(() => hoarding.close());

  const hoard = (args: Record<string, unknown>) =>
    rpc('tools/call', { name: 'hoard', arguments: args }, { url: hoarding.url });

  it('refuses a step value and then a call that would pass it, until the purge frees what they kept', async () => {
    const first = String((await hoard({ n: 3_000 })).result.taskId);
    expect((await poll(first, ended, hoarding.url)).result).toMatchObject({
      content: [{ text: 'kept 3000' }],
    });
    // The second fits, its step value does not: the step fails, naming the quota, and nothing is kept of it.
    const second = String((await hoard({ n: 3_000 })).result.taskId);
    const refused = await poll(second, ended, hoarding.url);
    expect(refused.result).toMatchObject({
      isError: true,
      content: [
        {
          text:
            'step "page" was refused: its value would put the tasks this principal keeps over their limit of ' +
            `bytes, until some are purged (max-stored-bytes-per-principal: ${LIMIT})`,
        },
      ],
    });
    const kept = await hoarding.runtime.store.inspect?.(second, Date.now());
    expect(kept?.steps.filter((s) => s.done)).toEqual([]);
    // A call whose arguments would pass it gets the quota's 429, as the task-count quotas give.
    const over = await hoard({ n: 1, pad: 'x'.repeat(1_000) });
    expect(over.error).toMatchObject({ code: 429, data: { quota: 'stored-bytes', limit: LIMIT } });
    expect(over.status).toBe(429);
    // Purged, the tasks free what they kept.
    await hoarding.runtime.store.purge(Date.now() + 48 * 3_600_000, 0);
    expect((await hoard({ n: 1, pad: 'x'.repeat(1_000) })).result.resultType).toBe('task');
  });
});
