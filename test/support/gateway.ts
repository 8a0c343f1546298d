// `durable-mcp gateway` over real processes for the gateway tests: a gateway in front of the SDK v1 test upstream
// (test/fixtures/gateway/upstream-v1.mjs), the upstream's record of the calls it received, and tasks followed as
// their owner sees them.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpClient } from '../../src/advanced.js';
import { TOKENS, tokenFile, type Who } from './admin-api.js';
import { BIN, startListening, type ServeProcess } from './cli.js';

export type Json = Record<string, unknown>;

export const UPSTREAM = fileURLToPath(new URL('../fixtures/gateway/upstream-v1.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** The upstream's exact answer to slow_sum 2 + 3. */
export const SUM = { content: [{ type: 'text', text: '5' }], structuredContent: { sum: 5 } };

/** A test's directory: the tokens file, and the files the upstream writes what it received to. */
export interface GatewayDir {
  dir: string;
  calls: string;
  cancels: string;
}

export function gatewayDir(dir: string): GatewayDir {
  writeFileSync(join(dir, 'tokens.json'), tokenFile(true));
  return { dir, calls: join(dir, 'calls.log'), cancels: join(dir, 'cancels.log') };
}

/** What reached the upstream: one record per call it received (tool, args, _meta, pid). */
export const upstreamCalls = (at: GatewayDir, tool?: string): Json[] =>
  existsSync(at.calls)
    ? readFileSync(at.calls, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Json)
        .filter((c) => tool === undefined || c.tool === tool)
    : [];

export const upstreamEnv = (at: GatewayDir, extra: Record<string, string> = {}): Record<string, string> => ({
  UPSTREAM_CALLS: at.calls,
  UPSTREAM_CANCELS: at.cancels,
  ...extra,
});

export interface GatewayOptions {
  /** Flags after the common ones (a store flag among them, or the test's SQLite file is used). */
  extra?: string[];
  /** Default: the SDK v1 upstream over stdio. */
  upstream?: string;
  env?: Record<string, string>;
  leaseMs?: number;
}

/** A gateway in front of `upstream`, its tokens from the test's directory; pushed onto `procs` to be killed. */
export async function startGateway(
  at: GatewayDir,
  procs: ServeProcess[],
  options: GatewayOptions = {},
): Promise<ServeProcess> {
  const extra = options.extra ?? [];
  const store = extra.includes('--store') ? [] : ['--store', join(at.dir, 'tasks.db')];
  const proc = await startListening(
    [
      BIN,
      'gateway',
      '--upstream',
      options.upstream ?? `stdio:node ${UPSTREAM}`,
      '--upstream-env',
      'UPSTREAM_CALLS,UPSTREAM_CANCELS,UPSTREAM_EXTRA_TOOL',
      ...store,
      '--port',
      '0',
      '--auth',
      join(at.dir, 'tokens.json'),
      '--tasks-get-rate',
      '0',
      '--lease-ms',
      String(options.leaseMs ?? 1_500),
      '--shutdown-grace-ms',
      '200',
      ...extra,
    ],
    { env: upstreamEnv(at, options.env), timeoutMs: 20_000 },
  );
  procs.push(proc);
  return proc;
}

export const gatewayClient = (proc: ServeProcess, who: Who, aware = true) =>
  createHttpClient({ url: proc.url, token: TOKENS[who], capabilities: aware ? TASKS : {} });

/** A client that declares the tasks extension and can answer elicitation. */
export const askingClient = (proc: ServeProcess, who: Who) =>
  createHttpClient({
    url: proc.url,
    token: TOKENS[who],
    capabilities: { ...TASKS, elicitation: {} },
  });

export async function callTool(proc: ServeProcess, who: Who, name: string, args: Json): Promise<Json> {
  return (await gatewayClient(proc, who).request('tools/call', { name, arguments: args })).result as Json;
}

/** Polls tasks/get as alice until the task is in one of `statuses`; every status message seen on the way is kept. */
export async function settled(
  proc: ServeProcess,
  taskId: string,
  statuses: string[],
  seen: string[] = [],
  timeoutMs = 30_000,
): Promise<Json> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const task = (await gatewayClient(proc, 'alice').request('tasks/get', { taskId })).result as Json;
    if (typeof task.statusMessage === 'string') seen.push(task.statusMessage);
    if (statuses.includes(String(task.status))) return task;
    if (Date.now() > end) throw new Error(`task ${taskId}: ${JSON.stringify(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** An operator of tenant A (ops-a) retries a task through the operator API: its status and body. */
export async function operatorRetry(
  proc: ServeProcess,
  taskId: string,
): Promise<{ status: number; body: Json }> {
  const api = (method: string, path: string, headers: Record<string, string> = {}) =>
    fetch(`${proc.origin}/admin/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKENS.opsA}`, ...headers },
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Json }));
  const { body: session } = await api('GET', '/session');
  return api('POST', `/tasks/${taskId}/retry`, { 'x-csrf-token': session.csrfToken as string });
}
