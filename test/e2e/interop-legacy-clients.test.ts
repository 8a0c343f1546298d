// Interop with 2025-11-25 clients as they really behave, each pinned exactly in package.json: the official SDK v1
// (`@modelcontextprotocol/sdk`: Client + StreamableHTTPClientTransport and its experimental tasks API) and the MCP
// Inspector CLI (`@modelcontextprotocol/inspector-cli`, run as its own process). Every flow runs against an
// anonymous server and a token-protected one. The server's tasks/result window is set far below the time a person
// takes to approve: the approval outlasts several windows and the client never sees an error.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { createStaticTokenAuthenticator } from '../../src/index.js';
import demo from '../../examples/demo/index.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';

type Json = Record<string, unknown>;

const TOKEN = 'interop-token-0123456789';
const RELATED = 'io.modelcontextprotocol/related-task';
/** The server's tasks/result window: the approval below takes several of them. */
const RESULT_WAIT_MS = 250;
const APPROVAL_MS = 1_500;

interface Setup {
  name: string;
  server?: DurableTestServer;
  headers: Record<string, string>;
}

const setups: Setup[] = [
  { name: 'anonymous server', headers: {} },
  { name: 'token-protected server', headers: { authorization: `Bearer ${TOKEN}` } },
];
const clients: Client[] = [];
let outlineBefore: string | undefined;

beforeAll(async () => {
  outlineBefore = process.env.DURABLE_MCP_DEMO_OUTLINE_MS;
  process.env.DURABLE_MCP_DEMO_OUTLINE_MS = '100';
  for (const setup of setups) {
    const protectedServer = setup.headers.authorization !== undefined;
    setup.server = await startDurableServer({
      toolSets: [demo],
      legacy: { resultWaitMs: RESULT_WAIT_MS },
      ...(protectedServer ? { authenticator: tokenFile() } : {}),
    });
  }
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all(setups.map((s) => s.server?.close()));
  if (outlineBefore === undefined) delete process.env.DURABLE_MCP_DEMO_OUTLINE_MS;
  else process.env.DURABLE_MCP_DEMO_OUTLINE_MS = outlineBefore;
});

/** The static-token authenticator `serve --auth` uses, on a token file of its own. */
function tokenFile() {
  const path = join(
    setups[0]?.server?.dir ?? process.env.TMPDIR ?? '/tmp',
    `tokens-${process.pid}-${Date.now()}.json`,
  );
  writeFileSync(path, JSON.stringify({ tokens: [{ token: TOKEN, tenant: 'acme', principal: 'alice' }] }));
  return createStaticTokenAuthenticator(path);
}

const url = (setup: Setup): string => setup.server?.url as string;

const texts = (result: CallToolResult): string[] =>
  result.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));

/** An SDK v1 client; `elicit` answers elicitation requests (its capability is declared only then). */
async function sdkClient(
  setup: Setup,
  elicit?: (request: ElicitRequest) => Promise<ElicitResult>,
  sessionId?: string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport; resumedFrom: string[] }> {
  const capabilities = elicit === undefined ? {} : { elicitation: {} };
  const client = new Client({ name: 'interop', version: '1.0.0' }, { capabilities });
  if (elicit !== undefined) client.setRequestHandler(ElicitRequestSchema, elicit);
  const resumedFrom: string[] = [];
  // What the client sends, seen from its side: the Last-Event-ID of each stream it resumes.
  const watched: typeof fetch = (input, init) => {
    const lastEventId = new Headers(init?.headers).get('last-event-id');
    if (init?.method === 'GET' && lastEventId !== null) resumedFrom.push(lastEventId);
    return fetch(input, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(url(setup)), {
    requestInit: { headers: setup.headers },
    fetch: watched,
    ...(sessionId === undefined ? {} : { sessionId }),
  });
  await client.connect(transport);
  clients.push(client);
  return { client, transport, resumedFrom };
}

const approveAfter =
  (ms: number, seen: ElicitRequest[] = []) =>
  async (request: ElicitRequest): Promise<ElicitResult> => {
    seen.push(request);
    await new Promise((r) => setTimeout(r, ms));
    return { action: 'accept', content: { approved: true } };
  };

describe.each(setups)('SDK v1 client on the 2025-11-25 wire: $name', (setup) => {
  it('lists tools and calls a plain tool', async () => {
    const { client } = await sdkClient(setup);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['generate_report', 'add', 'greet_person']),
    );
    expect(tools.find((t) => t.name === 'generate_report')?.execution).toEqual({ taskSupport: 'optional' });
    const result = (await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })) as CallToolResult;
    expect(result.structuredContent).toEqual({ sum: 5 });
  });

  it('callToolStream: an approval that outlasts several server waits completes without an error', async () => {
    const seen: ElicitRequest[] = [];
    const { client, resumedFrom } = await sdkClient(setup, approveAfter(APPROVAL_MS, seen));
    const started = Date.now();
    const kinds: string[] = [];
    let result: CallToolResult | undefined;
    let taskId: string | undefined;
    const stream = client.experimental.tasks.callToolStream(
      { name: 'generate_report', arguments: { size: 'small' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    for await (const message of stream) {
      kinds.push(message.type);
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result as CallToolResult;
      if (message.type === 'error') throw message.error;
    }
    expect(kinds[0]).toBe('taskCreated');
    expect(kinds).not.toContain('error');
    expect(Date.now() - started).toBeGreaterThan(APPROVAL_MS);
    expect(APPROVAL_MS).toBeGreaterThan(4 * RESULT_WAIT_MS);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.params._meta?.[RELATED]).toEqual({ taskId });
    expect(texts(result as CallToolResult).join('\n')).toContain('small report');
    expect(result?.structuredContent).toMatchObject({ size: 'small', approved: true });
    const task = await client.experimental.tasks.getTask(taskId as string);
    expect(task.status).toBe('completed');
    // The wait went on over streams the client resumed when a window closed, not one long request.
    expect(resumedFrom.filter((id) => id.startsWith('tr1.')).length).toBeGreaterThan(1);
  });

  it('getTask, listTasks and cancelTask on a task waiting for input', async () => {
    const { client } = await sdkClient(setup, () => new Promise<ElicitResult>(() => undefined));
    const created = (await client.request(
      {
        method: 'tools/call',
        params: { name: 'generate_report', arguments: { size: 'medium' }, task: { ttl: 60_000 } },
      },
      // CreateTaskResult: validated by the SDK's own schema through the experimental API below.
      CallToolResultSchema.passthrough(),
    )) as unknown as { task: { taskId: string; status: string } };
    const taskId = created.task.taskId;
    expect(created.task.status).toBe('working');
    let status = '';
    for (let i = 0; i < 100 && status !== 'input_required'; i++) {
      const task = await client.experimental.tasks.getTask(taskId);
      status = task.status;
      if (status !== 'input_required') await new Promise((r) => setTimeout(r, 50));
    }
    const waiting = await client.experimental.tasks.getTask(taskId);
    expect(waiting.status).toBe('input_required');
    expect(waiting.statusMessage).toBe('The task is waiting for input (elicitation/create).');
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((t) => t.taskId)).toContain(taskId);
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    const after = await client.experimental.tasks.getTask(taskId);
    expect(after.status).toBe('cancelled');
    expect(after.statusMessage).toBe('Task was cancelled.');
  });

  it('an elicitation tool called by a client without the capability says which capability is missing', async () => {
    const { client } = await sdkClient(setup);
    const error = await client.callTool({ name: 'greet_person', arguments: {} }).then(
      () => undefined,
      (err: unknown) => err as { code: number; message: string; data?: Json },
    );
    expect(error?.code).toBe(-32600);
    expect(error?.message).toContain("'elicitation'");
    expect(error?.message).not.toContain('params.task');
    expect(error?.data).toEqual({ requiredCapabilities: { elicitation: {} } });
    // Declaring it, as the message says, is all it takes.
    const { client: able } = await sdkClient(setup, async () => ({
      action: 'accept',
      content: { name: 'Ada' },
    }));
    const greeted = (await able.callTool({ name: 'greet_person', arguments: {} })) as CallToolResult;
    expect(texts(greeted).join(' ')).toContain('Ada');
  });

  it('a stale session gets 404, and the client starts over with initialize', async () => {
    const { client, transport } = await sdkClient(setup);
    const stale = transport.sessionId as string;
    await client.listTools();
    await transport.terminateSession();
    const { client: resumed } = await sdkClient(setup, undefined, stale);
    const error = await resumed.listTools().then(
      () => undefined,
      (err: unknown) => err as { code?: number },
    );
    expect(error?.code).toBe(404);
    const { client: fresh } = await sdkClient(setup);
    expect((await fresh.listTools()).tools.length).toBeGreaterThan(0);
  });
});

describe('SDK v1 client credentials', () => {
  it('a missing or wrong token is refused with a message the client can read', async () => {
    const setup = setups[1] as Setup;
    for (const [headers, message] of [
      [{}, 'Authentication required'],
      [{ authorization: 'Bearer not-the-token-at-all' }, 'Invalid bearer token'],
    ] as const) {
      const client = new Client({ name: 'interop', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(url(setup)), { requestInit: { headers } });
      const error = await client.connect(transport).then(
        () => undefined,
        (err: unknown) => err as { code?: number; message: string },
      );
      expect(error?.code).toBe(401);
      expect(error?.message).toContain(message);
    }
  });
});

/** The Inspector CLI's entry point; it reads its package.json relative to the working directory it is run in. */
const inspectorBin = (): string =>
  join(
    dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')),
    'build',
  );

/** Runs the Inspector CLI once; resolves with its exit code and output. */
function inspector(
  setup: Setup,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const headers = Object.entries(setup.headers).flatMap(([k, v]) => ['--header', `${k}: ${v}`]);
  const child = spawn(
    process.execPath,
    ['index.js', url(setup), '--transport', 'http', ...args, ...headers],
    {
      cwd: inspectorBin(),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.each(setups)('MCP Inspector CLI: $name', (setup) => {
  it('tools/list', async () => {
    const run = await inspector(setup, ['--method', 'tools/list']);
    expect(run.code).toBe(0);
    const listed = JSON.parse(run.stdout) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['generate_report', 'add', 'greet_person']),
    );
  });

  it('tools/call of a plain tool', async () => {
    const run = await inspector(setup, [
      '--method',
      'tools/call',
      '--tool-name',
      'add',
      '--tool-arg',
      'a=2',
      'b=40',
    ]);
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as Json).structuredContent).toEqual({ sum: 42 });
  });

  it('tools/call of an elicitation tool: the error names the missing capability', async () => {
    const run = await inspector(setup, ['--method', 'tools/call', '--tool-name', 'greet_person']);
    expect(run.code).not.toBe(0);
    const output = run.stdout + run.stderr;
    expect(output).toContain('-32600');
    expect(output).toContain("'elicitation'");
    expect(output).not.toContain('must be called as a task');
  });
});
