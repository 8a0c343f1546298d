// Legacy 2025-11-25 clients across replicas: two server instances on one SQLite file and on one PostgreSQL schema
// share sessions, tasks, tasks/list, and the answers to server→client requests (a task's input or a plain call's).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import conformance from '../../examples/conformance/index.js';
import { createPostgresTaskStore, createSqliteTaskStore } from '../../src/advanced.js';
import type { BuiltInTaskStore } from '../../src/stores/built-in.js';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import { legacyClientFor, legacyConnect, type LegacyClient } from '../support/legacy-client.js';
import { parseSse, post, type SseReader } from '../support/server.js';
import { validateLegacy } from '../support/legacy-schema.js';
import { TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

type Json = Record<string, unknown>;

function defineReplicaSuite(
  name: string,
  makeStore: () => BuiltInTaskStore,
  cleanup: () => Promise<void>,
): void {
  describe(`legacy clients on two replicas (${name})`, () => {
    let a: DurableTestServer;
    let b: DurableTestServer;
    let onA: LegacyClient;
    let onB: LegacyClient;

    beforeAll(async () => {
      // Only A runs a worker: whatever B answers comes from the shared store.
      a = await startDurableServer({
        toolSets: [conformance],
        store: makeStore,
        legacy: { resultWaitMs: 5_000 },
      });
      b = await startDurableServer({
        toolSets: [conformance],
        store: makeStore,
        worker: false,
        legacy: { resultWaitMs: 5_000 },
      });
      onA = await legacyConnect(a.url);
      onB = await legacyClientFor(b.url, onA.sessionId);
    });
    afterAll(async () => {
      await b?.close();
      await a?.close();
      await cleanup();
    });

    /** Reads the confirmation A asks on `stream`, accepts it through B, and returns A's last message. */
    const confirmThroughB = async (stream: SseReader, method: string, file: string): Promise<Json> => {
      const asked = (await stream.next(3_000)) as Json;
      expect(validateLegacy(asked, method)).toEqual([]);
      expect(asked).toMatchObject({ method: 'elicitation/create', params: { message: `Delete ${file}?` } });
      expect(await onB.answer(asked.id, { action: 'accept', content: { confirm: true } })).toBe(202);
      const final = (await stream.next(8_000)) as Json;
      stream.close();
      return final;
    };

    const createOnA = async (tool: string, args: Json): Promise<string> => {
      const result = await onA.result('tools/call', { name: tool, arguments: args, task: { ttl: 60_000 } });
      return (result.task as Json).taskId as string;
    };

    it('serves a session created on A from B, and keeps what B changed in it', async () => {
      const tools = (await onB.result('tools/list')).tools as Json[];
      expect(tools.map((t) => t.name)).toContain('slow_compute');
      expect(await onB.result('logging/setLevel', { level: 'warning' })).toEqual({});
      expect(await onA.result('ping')).toEqual({});
    });

    it('shows a task created through A to tasks/get, tasks/result and tasks/list on B', async () => {
      const taskId = await createOnA('slow_compute', { seconds: 0.3, label: 'shared' });
      expect((await onB.result('tasks/get', { taskId })).status).toMatch(/working|completed/);
      const result = await onB.result('tasks/result', { taskId });
      expect(result.content).toEqual([{ type: 'text', text: 'Computed shared in 0.3 s' }]);
      expect(await onB.result('tasks/get', { taskId })).toMatchObject({ taskId, status: 'completed' });
      const listed: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const got = await onB.result('tasks/list', cursor === undefined ? {} : { cursor });
        listed.push(...(got.tasks as Json[]).map((t) => t.taskId as string));
        cursor = got.nextCursor as string | undefined;
        if (cursor === undefined) break;
      }
      expect(listed).toContain(taskId);
    });

    it('takes the answer to an input request asked on A when it is POSTed to B', async () => {
      const taskId = await createOnA('confirm_delete', { filename: 'notes.txt' });
      await expect
        .poll(async () => (await onB.result('tasks/get', { taskId })).status, { timeout: 5_000 })
        .toBe('input_required');
      const final = await confirmThroughB(
        await onA.open('tasks/result', { taskId }),
        'tasks/result',
        'notes.txt',
      );
      expect((final.result as Json).content).toEqual([{ type: 'text', text: 'Deleted notes.txt' }]);
    });

    it('resumes on B a tasks/result whose window closed on another replica', async () => {
      // A third replica with a short window: its stream closes long before the task ends.
      const c = await startDurableServer({
        toolSets: [conformance],
        store: makeStore,
        worker: false,
        legacy: { resultWaitMs: 300 },
      });
      try {
        const taskId = await createOnA('slow_compute', { seconds: 1.5, label: 'resumed' });
        const headers = { ...onA.headers, 'content-type': 'application/json' };
        const first = await fetch(c.url, {
          method: 'POST',
          headers: { ...headers, accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 'across', method: 'tasks/result', params: { taskId } }),
        });
        const text = await first.text();
        expect(text).not.toContain('"result"');
        const lastEventId = [...text.matchAll(/^id: (.*)$/gm)].pop()?.[1] as string;
        expect(lastEventId).toMatch(/^tr1\./);
        const resumed = await fetch(b.url, {
          headers: { ...onA.headers, accept: 'text/event-stream', 'last-event-id': lastEventId },
        });
        const final = parseSse(await resumed.text()).messages[0] as Json;
        expect(validateLegacy(final, 'tasks/result')).toEqual([]);
        expect(final.id).toBe('across');
        expect((final.result as Json).content).toEqual([{ type: 'text', text: 'Computed resumed in 1.5 s' }]);
      } finally {
        await c.close();
      }
    });

    it('takes the answer to a request of a call without a task, asked on A, when it is POSTed to B', async () => {
      const call = { name: 'confirm_delete', arguments: { filename: 'a.txt' } };
      const final = await confirmThroughB(await onA.open('tools/call', call), 'tools/call', 'a.txt');
      expect((final.result as Json).content).toEqual([{ type: 'text', text: 'Deleted a.txt' }]);
    });

    it("ends A's call with the JSON-RPC error the client POSTed to B instead of an answer", async () => {
      const stream = await onA.open('tools/call', {
        name: 'confirm_delete',
        arguments: { filename: 'b.txt' },
      });
      const asked = (await stream.next(3_000)) as Json;
      const refusal = {
        jsonrpc: '2.0',
        id: asked.id,
        error: { code: -32042, message: 'user closed the dialog' },
      };
      expect((await post(b.url, refusal, onB.headers)).status).toBe(202);
      const final = (await stream.next(8_000)) as Json;
      stream.close();
      expect(final).toMatchObject({ error: { code: -32042, message: 'user closed the dialog' } });
    });

    it('ends the session for both replicas when B deletes it', async () => {
      const other = await legacyConnect(b.url);
      const sameOnA = await legacyClientFor(a.url, other.sessionId);
      expect(await sameOnA.result('ping')).toEqual({});
      expect(await other.end()).toBe(200);
      const { status, response } = await sameOnA.request('ping');
      expect(status).toBe(404);
      expect(response.error).toMatchObject({ code: -32600 });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-legacy-replicas-'));
const sqlitePath = join(dir, 'tasks.db');
defineReplicaSuite(
  'one SQLite file',
  () => createSqliteTaskStore({ path: sqlitePath, crossProcessPollMs: 20 }),
  async () => rmSync(dir, { recursive: true, force: true }),
);

const SCHEMA = `dmcp_legacy_${randomBytes(5).toString('hex')}`;
await withPostgres('legacy clients on PostgreSQL replicas', () =>
  defineReplicaSuite(
    'one PostgreSQL schema',
    () => createPostgresTaskStore({ connectionString: TEST_POSTGRES_URL, schema: SCHEMA, poolSize: 4 }),
    async () => {
      const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(SCHEMA)} CASCADE`);
      await admin.end();
    },
  ),
);
