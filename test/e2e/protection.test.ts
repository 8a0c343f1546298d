// Protection of stored data and limits: encryption at rest with key rotation, id entropy, polling and task quotas.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStaticTokenAuthenticator } from '../../src/auth/static-tokens.js';
import {
  createAnonymousAuthenticator,
  createDurableMcp,
  createHttpHandler,
  defineTool,
  listenHttp,
  LOOPBACK_HOSTS,
  textResult,
  type Authenticator,
  type DurableMcpOptions,
} from '../../src/index.js';
import { createSqliteTaskStore } from '../../src/advanced.js';
import { newTaskId } from '../../src/tasks/ids.js';
import { createPayloadCipher, parseKeyring } from '../../src/tasks/payload-cipher.js';

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} };
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'durable-mcp-protect-'));
  dirs.push(d);
  return d;
};

const secretTool = (name: string, sensitive: boolean) =>
  defineTool<{ secret: string }>({
    name,
    description: 'Keeps a secret in every payload column',
    inputSchema: { type: 'object', properties: { secret: { type: 'string' } }, required: ['secret'] },
    task: { support: 'required', sensitive },
    handler: async ({ secret }, ctx) => {
      const step = await ctx.step('remember', () => `STEP-${secret}`);
      const answer = ctx.input('confirm', {
        method: 'elicitation/create',
        params: {
          message: `QUESTION-${secret}`,
          requestedSchema: { type: 'object', properties: { word: { type: 'string' } } },
        },
      });
      return textResult(`RESULT-${secret} ${step} ${JSON.stringify(answer.content)}`);
    },
  });

async function start(dbPath: string, extra: Partial<DurableMcpOptions> = {}, authenticator?: Authenticator) {
  const runtime = createDurableMcp({
    toolSets: [{ tools: [secretTool('secret_echo', false), secretTool('sensitive_echo', true)] }],
    store: createSqliteTaskStore({ path: dbPath }),
    worker: { pollMs: 30 },
    ...extra,
  });
  const handler = createHttpHandler({
    server: runtime.server,
    authenticator: authenticator ?? createAnonymousAuthenticator(),
    origin: { allowedHosts: LOOPBACK_HOSTS },
  });
  const running = await listenHttp(handler, '127.0.0.1', 0);
  let id = 1;
  const rpc = async (method: string, params: Record<string, unknown>, token?: string) => {
    const name = method === 'tools/call' ? params.name : params.taskId;
    const res = await fetch(running.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        'mcp-name': String(name),
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: id++,
        method,
        params: {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': TASKS,
          },
        },
      }),
    });
    return {
      status: res.status,
      headers: res.headers,
      body: (await res.json()) as {
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      },
    };
  };
  const until = async (taskId: string, status: string) => {
    for (let i = 0; i < 200; i++) {
      const r = await rpc('tasks/get', { taskId });
      if (r.body.result?.status === status) return r.body.result;
      await new Promise((res) => setTimeout(res, 25));
    }
    throw new Error(`task ${taskId} never reached ${status}`);
  };
  const runSecret = async (tool: string, secret: string) => {
    const created = await rpc('tools/call', { name: tool, arguments: { secret } });
    const taskId = String(created.body.result?.taskId);
    await until(taskId, 'input_required');
    await rpc('tasks/update', {
      taskId,
      inputResponses: { confirm: { action: 'accept', content: { word: `ANSWER-${secret}` } } },
    });
    return { taskId, done: await until(taskId, 'completed') };
  };
  return {
    rpc,
    runSecret,
    async close() {
      await running.close(200);
      await runtime.close(500);
    },
  };
}

const rawFile = (dbPath: string): string =>
  [dbPath, `${dbPath}-wal`]
    .filter(existsSync)
    .map((p) => readFileSync(p).toString('latin1'))
    .join('');

describe('encryption at rest', () => {
  it('leaves no plaintext of arguments, questions, answers, steps or results in the file, and survives a key rotation', async () => {
    const db = join(tempDir(), 'tasks.db');
    const k1 = `k1:${randomBytes(32).toString('base64')}`;
    const k2 = `k2:${randomBytes(32).toString('base64')}`;
    const s1 = await start(db, {
      store: createSqliteTaskStore({ path: db, cipher: createPayloadCipher(parseKeyring(k1)) }),
    });
    const first = await s1.runSecret('secret_echo', 'Zebra7731');
    expect(JSON.stringify(first.done.result)).toContain('RESULT-Zebra7731 STEP-Zebra7731');
    await s1.close();
    const raw = rawFile(db);
    expect(raw).not.toContain('Zebra7731');
    expect(raw).toContain('enc2.k1.');

    const rotated = createPayloadCipher(parseKeyring(`${k2},${k1}`));
    const s2 = await start(db, { store: createSqliteTaskStore({ path: db, cipher: rotated }) });
    const again = await s2.rpc('tasks/get', { taskId: first.taskId });
    expect(JSON.stringify(again.body.result?.result)).toContain('ANSWER-Zebra7731');
    const second = await s2.runSecret('secret_echo', 'Okapi4410');
    expect(JSON.stringify(second.done.result)).toContain('RESULT-Okapi4410');
    await s2.close();
    const raw2 = rawFile(db);
    expect(raw2).not.toContain('Okapi4410');
    expect(raw2).not.toContain('Zebra7731');
    expect(raw2).toContain('enc2.k2.');
  });

  it("in 'sensitive' mode seals only the tasks of tools marked sensitive", async () => {
    const db = join(tempDir(), 'tasks.db');
    const cipher = createPayloadCipher(parseKeyring(`k1:${randomBytes(32).toString('base64')}`));
    const s = await start(db, { store: createSqliteTaskStore({ path: db, cipher, encrypt: 'sensitive' }) });
    await s.runSecret('secret_echo', 'Plainly1234');
    await s.runSecret('sensitive_echo', 'Hidden5678');
    await s.close();
    const raw = rawFile(db);
    expect(raw).toContain('Plainly1234');
    expect(raw).not.toContain('Hidden5678');
  });
});

describe('task ids', () => {
  it('are unique, fixed-length, and show no pattern across 20k draws', () => {
    const ids = Array.from({ length: 20_000 }, () => newTaskId());
    expect(new Set(ids).size).toBe(ids.length);
    const bodies = ids.map((id) => id.slice('task_'.length));
    expect(new Set(bodies.map((b) => b.length))).toEqual(new Set([32]));
    // Each position but the last uses the 64 base64url symbols about equally (6 random bits each).
    for (let pos = 0; pos < 31; pos++) {
      const counts = new Map<string, number>();
      for (const b of bodies) counts.set(b[pos] as string, (counts.get(b[pos] as string) ?? 0) + 1);
      expect(counts.size).toBe(64);
      const expected = ids.length / 64;
      const chi2 = [...counts.values()].reduce((acc, n) => acc + (n - expected) ** 2 / expected, 0);
      expect(chi2).toBeLessThan(140); // 63 degrees of freedom; p < 1e-7 above this
    }
    // Consecutive ids share no more characters at the same positions than chance allows.
    let same = 0;
    for (let i = 1; i < bodies.length; i++) {
      for (let p = 0; p < 32; p++) if (bodies[i]?.[p] === bodies[i - 1]?.[p]) same++;
    }
    expect(same / ((bodies.length - 1) * 32)).toBeLessThan(0.03);
  });
});

describe('limits', () => {
  it('rate-limits tasks/get per principal with 429, a clear error and Retry-After', async () => {
    const dir = tempDir();
    const file = join(dir, 'tokens.json');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      file,
      JSON.stringify({
        tokens: [
          { token: 'alice-secret-token-0001', tenant: 't', principal: 'alice' },
          { token: 'bob-secret-token-000002', tenant: 't', principal: 'bob' },
        ],
      }),
    );
    const db = join(dir, 'tasks.db');
    const s = await start(
      db,
      { tasks: { tasksGetRate: { perSecond: 1, burst: 2 } } },
      createStaticTokenAuthenticator(file),
    );
    const created = await s.rpc(
      'tools/call',
      { name: 'secret_echo', arguments: { secret: 'x' } },
      'alice-secret-token-0001',
    );
    const taskId = String(created.body.result?.taskId);
    expect((await s.rpc('tasks/get', { taskId }, 'alice-secret-token-0001')).status).toBe(200);
    expect((await s.rpc('tasks/get', { taskId }, 'alice-secret-token-0001')).status).toBe(200);
    const limited = await s.rpc('tasks/get', { taskId }, 'alice-secret-token-0001');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.body.error).toMatchObject({
      code: 429,
      message: expect.stringMatching(/Polling too fast/),
    });
    // Another principal has its own budget.
    expect((await s.rpc('tasks/get', { taskId }, 'bob-secret-token-000002')).body.error?.code).toBe(-32602);
    await s.close();
  });

  it('caps unfinished tasks per principal', async () => {
    const db = join(tempDir(), 'tasks.db');
    const s = await start(db, { tasks: { maxActiveTasksPerPrincipal: 2 } });
    for (const secret of ['a', 'b']) {
      expect(
        (await s.rpc('tools/call', { name: 'secret_echo', arguments: { secret } })).body.result?.resultType,
      ).toBe('task');
    }
    const third = await s.rpc('tools/call', { name: 'secret_echo', arguments: { secret: 'c' } });
    expect(third.status).toBe(429);
    expect(third.body.error).toMatchObject({ code: 429, data: { limit: 2 } });
    await s.close();
  });
});
