// `durable-mcp demo`: runs the generate_report flow over real HTTP and prints the reference sequence of the lesson
// (six requests, ids 0–5), then checks what the lesson asks a reader to verify, then restarts the server and shows
// the task survived. Waiting between the shown requests is done on the task's changes, pushed on one
// subscriptions/listen stream of a second client, so no shown id is spent on it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpClient, type McpHttpClient } from '../../client/http-client.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import { TASKS_EXTENSION } from '../../wire/meta-keys.js';
import { VERSION } from '../../version.js';
import { parseFlags, UsageError } from '../args.js';
import { oneLine, printErr, printJson, printOut } from '../terminal-text.js';

export const demoUsage = `durable-mcp demo [--store PATH] [--output json]
  Starts a server on a free loopback port (demo tools, SQLite store) and runs generate_report as a durable task,
  printing one line per shown request (ids 0–5): discover, create, working, input_required, the answer, completed.
  The waits in between follow the task's changes on one subscriptions/listen stream, so they spend no shown id.
  Then checks that tasks/status, tasks/result and tasks/list answer method-not-found, that tools/list is
  deterministic and that task methods need their task id in Mcp-Name; then restarts the server on the same store
  and reads the task again. --output json prints one JSON document instead.`;

const BIN = fileURLToPath(new URL('../../../../bin/durable-mcp.js', import.meta.url));
const CAPS = { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } };
const TERMINAL = ['completed', 'failed', 'cancelled'];

interface Server {
  child: ChildProcess;
  url: string;
}

function startServer(store: string, port: number): Promise<Server> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', String(port), '--store', store, '--tools', 'demo'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
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
    if (s.child.exitCode !== null) return resolve();
    s.child.once('exit', () => resolve());
    s.child.kill('SIGTERM');
  });

interface Shown {
  id: number;
  resultType: string;
  /** The task's status, or `ack` for a result without one. */
  status: string;
}

const shown = (id: unknown, result: Record<string, unknown>): Shown => ({
  id: Number(id),
  resultType: String(result.resultType),
  status: String(result.status ?? 'ack'),
});

const showLine = ({ id, resultType, status }: Shown): string =>
  oneLine`id=${id} resultType=${resultType} status=${status}`;

/**
 * Waits on the task's changes: one subscriptions/listen stream of the watching client (a POST answered with events),
 * open from creation to the end, which gets the task's snapshot at once and then each change. No request is spent
 * on a wait, and none by the shown client.
 */
function watchTask(watcher: McpHttpClient, taskId: string) {
  const stop = new AbortController();
  let status: string | undefined;
  let failure: Error | undefined;
  const waiting = new Set<() => void>();
  const wake = (): void => {
    for (const w of waiting) w();
  };
  void watcher
    .request(
      'subscriptions/listen',
      { notifications: { taskIds: [taskId] } },
      {
        signal: stop.signal,
        onNotification: (m) => {
          const p = m.params as Record<string, unknown> | undefined;
          if (m.method !== 'notifications/tasks' || p?.taskId !== taskId) return;
          status = String(p.status);
          wake();
        },
      },
    )
    .then(
      () => (failure = new Error('the listen stream ended before the task did')),
      (err: unknown) => (failure = err instanceof Error ? err : new Error(String(err))),
    )
    .finally(wake);
  return {
    /** Resolves once the task's pushed status is one of `until`. */
    async until(until: string[]): Promise<void> {
      const deadline = setTimeout(() => {
        failure ??= new Error(`task ${taskId} did not reach ${until.join('/')} in time`);
        wake();
      }, 60_000);
      try {
        while (status === undefined || !until.includes(status)) {
          if (failure !== undefined && !stop.signal.aborted) throw failure;
          await new Promise<void>((resolve) => {
            const w = (): void => {
              waiting.delete(w);
              resolve();
            };
            waiting.add(w);
          });
        }
      } finally {
        clearTimeout(deadline);
      }
    },
    close: (): void => stop.abort(),
  };
}

interface Check {
  check: string;
  ok: boolean;
  detail: string;
}

/** The code of the error a request gets, or undefined when it succeeds. */
async function errorCode(run: () => Promise<unknown>): Promise<number | undefined> {
  try {
    await run();
    return undefined;
  } catch (err) {
    if (err instanceof ProtocolError) return err.code;
    throw err;
  }
}

/** What the lesson asks a reader to verify on the modern service. */
async function checks(url: string, hidden: McpHttpClient, taskId: string): Promise<Check[]> {
  const out: Check[] = [];
  for (const method of ['tasks/status', 'tasks/result', 'tasks/list']) {
    const code = await errorCode(() => hidden.request(method, { taskId }));
    out.push({ check: method, ok: code === -32601, detail: `method not found (${String(code)})` });
  }
  const [a, b] = [await hidden.request('tools/list'), await hidden.request('tools/list')];
  const same = JSON.stringify(a.result) === JSON.stringify(b.result);
  out.push({ check: 'tools/list', ok: same, detail: same ? 'deterministic' : 'differs between calls' });
  // The client mirrors the task id in Mcp-Name; a request whose header names another task is refused.
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tasks/get',
      'mcp-name': 'task_not_this_one',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'check',
      method: 'tasks/get',
      params: {
        taskId,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': CAPS,
        },
      },
    }),
  });
  const body = (await res.json()) as { error?: { code?: number } };
  const code = body.error?.code;
  out.push({
    check: 'Mcp-Name',
    ok: code === -32020,
    detail: `mirrors the task id on task methods; another id is refused (${String(code)})`,
  });
  return out;
}

async function run(client: McpHttpClient, watcher: McpHttpClient, url: string) {
  const steps: Shown[] = [];
  const discover = await client.request('server/discover');
  steps.push(shown(discover.id, discover.result));
  const created = await client.request('tools/call', {
    name: 'generate_report',
    arguments: { size: 'medium' },
  });
  steps.push(shown(created.id, created.result));
  const taskId = String(created.result.taskId);
  const watch = watchTask(watcher, taskId);
  try {
    const working = await client.request('tasks/get', { taskId });
    steps.push(shown(working.id, working.result));
    await watch.until(['input_required', ...TERMINAL]);
    const waiting = await client.request('tasks/get', { taskId });
    steps.push(shown(waiting.id, waiting.result));
    const keys = Object.keys((waiting.result.inputRequests as Record<string, unknown> | undefined) ?? {});
    const answers = Object.fromEntries(
      keys.map((k) => [k, { action: 'accept', content: { approved: true } }]),
    );
    const ack = await client.request('tasks/update', { taskId, inputResponses: answers });
    steps.push(shown(ack.id, ack.result));
    await watch.until(TERMINAL);
    const done = await client.request('tasks/get', { taskId });
    steps.push(shown(done.id, done.result));
    return { steps, taskId, done: done.result, checks: await checks(url, watcher, taskId) };
  } finally {
    watch.close();
  }
}

const withoutMeta = (r: Record<string, unknown>): string => JSON.stringify({ ...r, _meta: undefined });

export async function demo(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, { store: { type: 'string' }, output: { type: 'string' } });
  if (values.output !== undefined && values.output !== 'json') throw new UsageError('--output must be json');
  const json = values.output === 'json';
  const dir = values.store === undefined ? mkdtempSync(join(tmpdir(), 'durable-mcp-demo-')) : undefined;
  const store = (values.store as string | undefined) ?? join(dir as string, 'tasks.db');
  let server = await startServer(store, 0);
  try {
    const port = Number(new URL(server.url).port);
    if (!json) printErr(`server ${server.url} (store ${store})`);
    const clientInfo = { name: 'durable-mcp-demo', version: VERSION };
    const client = createHttpClient({ url: server.url, clientInfo, capabilities: CAPS, firstId: 0 });
    const watcher = createHttpClient({ url: server.url, clientInfo, capabilities: CAPS, firstId: 1_000 });
    const result = await run(client, watcher, server.url);
    if (!json) {
      for (const step of result.steps) printOut(showLine(step));
      for (const c of result.checks) printOut(`check ${c.check}: ${c.ok ? 'ok' : 'FAILED'}, ${c.detail}`);
      printOut('restarting the server on the same store…');
    }
    await stopServer(server);
    server = await startServer(store, port);
    const again = await client.request('tasks/get', { taskId: result.taskId });
    const same = withoutMeta(again.result) === withoutMeta(result.done);
    if (json) {
      const restart = { ...shown(again.id, again.result), identical: same };
      printJson({ responses: result.steps, checks: result.checks, restart }, 2);
    } else
      printOut(
        `${showLine(shown(again.id, again.result))} (after restart: ${same ? 'identical snapshot' : 'snapshot differs'})`,
      );
    if (!same || result.checks.some((c) => !c.ok)) process.exitCode = 1;
  } finally {
    await stopServer(server);
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}
