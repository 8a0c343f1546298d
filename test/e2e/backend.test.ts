// Backends and the one-call server: the requestState secret is the backend's (so a restart or another replica
// accepts what this process sealed), and `createDurableMcp(…).listen()` serves both wires.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createDurableMcp,
  createSqliteBackend,
  defineTool,
  textResult,
  type Backend,
} from '../../src/index.js';
import { createPostgresBackend } from '../../src/postgres.js';
import { TEST_POSTGRES_URL } from '../support/postgres-url.js';
import { withPostgres } from '../support/postgres.js';
import { legacyInitialize } from '../support/legacy-client.js';
import { envelope, mcpHeaders } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-backend-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Asks for a confirmation through MRTR, so that the second round carries the sealed requestState.
const confirm = defineTool({
  name: 'confirm',
  inputSchema: { type: 'object' },
  handler: async (_args, ctx) => {
    const answer = ctx.input('ok', {
      method: 'elicitation/create',
      params: { message: 'OK?', requestedSchema: { type: 'object', properties: {} } },
    });
    return textResult(`answered ${String(answer.action)}`);
  },
});

const ELICIT = { elicitation: {} };
const KEY = `k1:${randomBytes(32).toString('base64')}`;

async function call(url: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: mcpHeaders('tools/call', 'confirm'),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'confirm', arguments: {}, ...params, _meta: envelope(ELICIT) },
    }),
  });
  const body = (await res.json()) as { result?: Record<string, unknown>; error?: Record<string, unknown> };
  return body.result ?? { error: body.error };
}

/** Round one on a server over `first`, round two on a server over `second`: the answer must be accepted. */
async function sealedAcross(first: Backend, second: () => Promise<Backend> | Backend): Promise<unknown> {
  const a = createDurableMcp({ toolSets: [{ tools: [confirm] }], backend: first, worker: false });
  const onA = await a.listen({ port: 0 });
  const asked = await call(onA.url, {});
  await a.close(0);
  expect(asked.resultType).toBe('input_required');
  const b = createDurableMcp({ toolSets: [{ tools: [confirm] }], backend: await second(), worker: false });
  const onB = await b.listen({ port: 0 });
  try {
    return await call(onB.url, {
      requestState: asked.requestState,
      inputResponses: { ok: { action: 'accept', content: {} } },
    });
  } finally {
    await b.close(0);
  }
}

describe('the SQLite backend', () => {
  it('keeps one requestState secret in the file: a restarted server accepts the previous one’s MRTR round', async () => {
    const path = join(dir, 'secret.db');
    const first = createSqliteBackend({ path });
    const secret = first.stateSecret;
    const answered = await sealedAcross(first, () => createSqliteBackend({ path }));
    expect(answered).toMatchObject({ resultType: 'complete', content: [{ text: 'answered accept' }] });
    const again = createSqliteBackend({ path });
    expect(again.stateSecret).toBe(secret);
    expect(again.description).toBe(`SQLite ${path}`);
    await again.close();
  });

  it('uses a given secret instead, and a server without the stored one refuses the round', async () => {
    const path = join(dir, 'given.db');
    const given = createSqliteBackend({ path, stateSecret: 'from-a-secret-manager' });
    expect(given.stateSecret).toBe('from-a-secret-manager');
    const refused = await sealedAcross(given, () => createSqliteBackend({ path }));
    // The state does not open with another secret: the round is refused, never run on forged answers.
    expect(refused).toMatchObject({ error: { code: -32602 } });
  });

  it('with an encryption key, keeps the secret sealed: the clear one of before is sealed, then dropped', async () => {
    const path = join(dir, 'sealed.db');
    const before = createSqliteBackend({ path });
    const secret = before.stateSecret;
    await before.close();
    const sealed = createSqliteBackend({ path, encryptionKey: KEY });
    expect(sealed.stateSecret).toBe(secret); // rounds in flight still open
    await sealed.close();
    const db = new Database(path, { readonly: true });
    const rows = db.prepare('SELECT key, value FROM server_meta').all() as { key: string; value: string }[];
    db.close();
    expect(rows.map((r) => r.key)).not.toContain('request_state_secret');
    expect(rows.find((r) => r.key === 'request_state_secret_sealed')?.value).toMatch(/^enc2\./);
    expect(rows.some((r) => r.value.includes(secret))).toBe(false);
    const again = createSqliteBackend({ path, encryptionKey: KEY });
    expect(again.stateSecret).toBe(secret);
    await again.close();
  });

  it('listen() serves the legacy wire too, unless told not to', async () => {
    const mcp = createDurableMcp({
      toolSets: [{ tools: [confirm] }],
      backend: createSqliteBackend({ path: join(dir, 'legacy.db') }),
    });
    const withLegacy = await mcp.listen({ port: 0 });
    const withoutLegacy = await mcp.listen({ port: 0, http: { legacy: false } });
    try {
      const served = await legacyInitialize(withLegacy.url);
      expect(served.status).toBe(200);
      expect(served.headers.get('mcp-session-id')).toMatch(/\S/);
      const refused = await legacyInitialize(withoutLegacy.url);
      expect(refused.headers.get('mcp-session-id')).toBeNull();
      expect(refused.status).toBeGreaterThanOrEqual(400);
    } finally {
      await mcp.close(0);
    }
  });
});

await withPostgres('the PostgreSQL backend', () => {
  describe('the PostgreSQL backend', () => {
    const schema = `backend_${process.pid}_${Date.now()}`;
    const open = () => createPostgresBackend({ connectionString: TEST_POSTGRES_URL, schema });
    afterAll(async () => {
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      await admin.end();
    });

    it('keeps one requestState secret in the schema for every replica', async () => {
      const first = await open();
      const secret = first.stateSecret;
      expect(first.description).toMatch(new RegExp(`schema ${schema}$`));
      const answered = await sealedAcross(first, open);
      expect(answered).toMatchObject({ resultType: 'complete', content: [{ text: 'answered accept' }] });
      const again = await open();
      expect(again.stateSecret).toBe(secret);
      await again.close();
    });

    it('with an encryption key, stores the secret sealed for every replica', async () => {
      const sealedSchema = `${schema}_sealed`;
      const open = () =>
        createPostgresBackend({
          connectionString: TEST_POSTGRES_URL,
          schema: sealedSchema,
          encryptionKey: KEY,
        });
      const first = await open();
      const second = await open();
      expect(second.stateSecret).toBe(first.stateSecret);
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ key: string; value: string }>(
          `SELECT key, value FROM ${pg.escapeIdentifier(sealedSchema)}.server_meta`,
        );
        expect(rows.map((r) => r.key)).not.toContain('request_state_secret');
        expect(rows.some((r) => r.value.includes(first.stateSecret))).toBe(false);
        await admin.query(`DROP SCHEMA ${pg.escapeIdentifier(sealedSchema)} CASCADE`);
      } finally {
        await admin.end();
        await first.close();
        await second.close();
      }
    });

    it('fails when it cannot reach the database, and says so', async () => {
      await expect(
        createPostgresBackend({
          connectionString: 'postgres://postgres@127.0.0.1:1/none',
          connectTimeoutMs: 500,
        }),
      ).rejects.toThrow(/unavailable|ECONNREFUSED|connect/i);
    });
  });
});
