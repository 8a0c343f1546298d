// `durable-mcp demo`: runs the generate_report flow over real HTTP, restarts the server, shows the task survived.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpClient, type McpHttpClient } from '../../client/http-client.js';
import { TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { VERSION } from '../../version.js';
import { parseFlags } from '../args.js';

export const demoUsage = `durable-mcp demo [--store PATH]
  Starts a server on a free loopback port (demo tools, SQLite store), runs generate_report as a durable task:
  create, poll, answer the approval, poll to completion; then restarts the server on the same store and reads
  the task again. Prints one line per response: id=N resultType=… status=…`;

const BIN = fileURLToPath(new URL('../../../../bin/durable-mcp.js', import.meta.url));

interface Server {
  child: ChildProcess;
  url: string;
}

function startServer(store: string, port: number): Promise<Server> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', String(port), '--store', store, '--tools', 'demo'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m !== null) resolve({ child, url: m[1] as string });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

const stopServer = (s: Server): Promise<void> =>
  new Promise((resolve) => {
    s.child.once('exit', () => resolve());
    s.child.kill('SIGTERM');
  });

const line = (id: unknown, result: Record<string, unknown>, extra = ''): void =>
  console.log(
    `id=${String(id)} resultType=${String(result.resultType)} status=${String(result.status ?? '-')}${extra}`,
  );

async function followUntil(
  client: McpHttpClient,
  taskId: string,
  until: string[],
  lastPrinted: string,
  /** Print only the final status (after an answer the task may pass through working again). */
  finalOnly = false,
): Promise<Record<string, unknown>> {
  let printed = lastPrinted;
  for (let i = 0; i < 600; i++) {
    const reply = await client.request('tasks/get', { taskId });
    const status = String(reply.result.status);
    if (status !== printed && (!finalOnly || until.includes(status))) {
      line(reply.id, reply.result);
      printed = status;
    }
    if (until.includes(status)) return reply.result;
    await new Promise((r) => setTimeout(r, Number(reply.result.pollIntervalMs ?? 500)));
  }
  throw new Error(`task ${taskId} did not reach ${until.join('/')} in time`);
}

const withoutMeta = (r: Record<string, unknown>): string => JSON.stringify({ ...r, _meta: undefined });

export async function demo(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, { store: { type: 'string' } });
  const dir = values.store === undefined ? mkdtempSync(join(tmpdir(), 'durable-mcp-demo-')) : undefined;
  const store = (values.store as string | undefined) ?? join(dir as string, 'tasks.db');
  let server = await startServer(store, 0);
  try {
    const port = Number(new URL(server.url).port);
    console.log(`server ${server.url} (store ${store})`);
    const client = createHttpClient({
      url: server.url,
      clientInfo: { name: 'durable-mcp-demo', version: VERSION },
      capabilities: { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } },
    });
    const discover = await client.request('server/discover');
    line(discover.id, discover.result);
    const created = await client.request('tools/call', {
      name: 'generate_report',
      arguments: { size: 'medium' },
    });
    line(created.id, created.result, ` taskId=${String(created.result.taskId)}`);
    const taskId = String(created.result.taskId);
    const waiting = await followUntil(
      client,
      taskId,
      ['input_required', 'completed', 'failed', 'cancelled'],
      '',
    );
    const keys = Object.keys((waiting.inputRequests as Record<string, unknown> | undefined) ?? {});
    const answers = Object.fromEntries(
      keys.map((k) => [k, { action: 'accept', content: { approved: true } }]),
    );
    const ack = await client.request('tasks/update', { taskId, inputResponses: answers });
    line(ack.id, ack.result);
    const done = await followUntil(
      client,
      taskId,
      ['completed', 'failed', 'cancelled'],
      'input_required',
      true,
    );
    console.log('restarting the server on the same store…');
    await stopServer(server);
    server = await startServer(store, port);
    const again = await client.request('tasks/get', { taskId });
    const same = withoutMeta(again.result) === withoutMeta(done);
    line(again.id, again.result, ` (after restart: ${same ? 'identical snapshot' : 'snapshot differs'})`);
    if (!same) process.exitCode = 1;
  } finally {
    await stopServer(server);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
