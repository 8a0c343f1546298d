// The operator API over a real `serve` process: a tokens file with two ordinary users in tenants A and B, an operator
// of tenant A and an operator of every tenant; tasks of several owners created through /mcp; helpers to call the API.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpClient } from '../../src/advanced.js';
import { startServe, type ServeProcess } from './cli.js';

export const TOOLS = fileURLToPath(new URL('../fixtures/tools/admin-tools.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

export const TOKENS = {
  alice: 'alice-token-0123456789abcdef',
  bob: 'bob-token-0123456789abcdef000',
  opsA: 'ops-a-token-0123456789abcdef0',
  root: 'root-token-0123456789abcdef00',
} as const;
export type Who = keyof typeof TOKENS;

/** alice and ops-a are in tenant A, bob in B, root in "ops" (an operator of every tenant). */
export const tokenFile = (operators: boolean): string =>
  JSON.stringify({
    tokens: [
      { token: TOKENS.alice, tenant: 'A', principal: 'alice' },
      { token: TOKENS.bob, tenant: 'B', principal: 'bob' },
      operators
        ? { token: TOKENS.opsA, tenant: 'A', principal: 'ops-a', roles: ['operator'] }
        : { token: TOKENS.opsA, tenant: 'A', principal: 'ops-a' },
      operators
        ? { token: TOKENS.root, tenant: 'ops', principal: 'root', roles: ['operator'], operatorTenants: '*' }
        : { token: TOKENS.root, tenant: 'ops', principal: 'root' },
    ],
  });

export interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export interface AdminServer {
  proc: ServeProcess;
  dir: string;
  logFile: string;
  /** Calls the operator API (path below /admin/api/v1) as `who` (or without credentials). */
  api(method: string, path: string, who?: Who, headers?: Record<string, string>): Promise<Reply>;
  /** A change with the caller's own CSRF token. */
  change(method: 'POST' | 'DELETE', path: string, who: Who): Promise<Reply>;
  /** Starts a task of `tool` as `who` through /mcp; its id. */
  create(who: Who, tool: string, args?: Record<string, unknown>): Promise<string>;
  /** `tasks/get` of a task as `who` (its owner's view) through /mcp: the result. */
  ownerGet(who: Who, taskId: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Starts `serve` with the admin tools and the tokens file; `storeArgs` choose the store, `extra` more flags. */
export async function startAdminServer(
  storeArgs: (dir: string) => string[],
  operators = true,
  extra: string[] = [],
): Promise<AdminServer> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-admin-'));
  const tokens = join(dir, 'tokens.json');
  writeFileSync(tokens, tokenFile(operators));
  const logFile = join(dir, 'steps.log');
  writeFileSync(logFile, '');
  const proc = await startServe(
    [
      ...storeArgs(dir),
      '--port',
      '0',
      '--auth',
      tokens,
      '--tools',
      TOOLS,
      '--tasks-get-rate',
      '0',
      '--shutdown-grace-ms',
      '500',
      ...extra,
    ],
    20_000,
    { DURABLE_MCP_TEST_LOG: logFile },
  );
  const api = async (method: string, path: string, who?: Who, headers: Record<string, string> = {}) => {
    const auth: Record<string, string> = who === undefined ? {} : { authorization: `Bearer ${TOKENS[who]}` };
    const res = await fetch(`${proc.origin}/admin/api/v1${path}`, {
      method,
      headers: { ...auth, ...headers },
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>,
    };
  };
  const csrf = new Map<Who, string>();
  return {
    proc,
    dir,
    logFile,
    api,
    async change(method, path, who) {
      if (!csrf.has(who)) csrf.set(who, (await api('GET', '/session', who)).body.csrfToken as string);
      return api(method, path, who, { 'x-csrf-token': csrf.get(who) as string });
    },
    async create(who, tool, args = {}) {
      const client = createHttpClient({ url: proc.url, token: TOKENS[who], capabilities: TASKS });
      const { result } = await client.request('tools/call', { name: tool, arguments: args });
      if (result.resultType !== 'task')
        throw new Error(`${tool} did not make a task: ${JSON.stringify(result)}`);
      return result.taskId as string;
    },
    async ownerGet(who, taskId) {
      const client = createHttpClient({ url: proc.url, token: TOKENS[who], capabilities: TASKS });
      return (await client.request('tasks/get', { taskId })).result;
    },
    async close() {
      proc.child.kill('SIGTERM');
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits until `probe` holds (polling every 50 ms). */
export async function waitUntil(
  probe: () => Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
