// How many statements one tasks/get sends to PostgreSQL: one, whatever the task's state (working, waiting for input,
// finished) and for a task the caller may not see, so that a poll costs one round trip and a regression fails here;
// concurrent polls share statements; and the unpacking of the one JSON array that statement returns.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDurableMcp, type DurableMcp } from '../src/index.js';
import { createPostgresTaskStore } from '../src/stores/postgres/task-store.js';
import { fromPacked } from '../src/stores/postgres/rows.js';
import { OWNED_PACKED } from '../src/stores/postgres/sql/reads.js';
import { ALICE, BOB, newTask, T0 } from '../src/stores/contract/harness.contract.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  TASKS_EXTENSION,
} from '../src/wire/meta-keys.js';
import type { JsonObject } from '../src/json.js';
import { newTaskId } from '../src/tasks/ids.js';
import type { TaskOwner } from '../src/tasks/task.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from './support/postgres.js';

const SCHEMA = `dmcp_get_statements_${Math.random().toString(16).slice(2, 10)}`;
const NOW = T0 + 1_000;
const REQUEST = { method: 'elicitation/create', params: { message: 'Go on?' } };

/** A pool whose clients count the statements they send. */
function countingPool(): { pool: pg.Pool; sent: string[] } {
  const sent: string[] = [];
  const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max: 2 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const config = args[0] as string | { text: string };
      sent.push(typeof config === 'string' ? config : config.text);
      return query(...args);
    };
  });
  return { pool, sent };
}

/** tasks/get as a client with the tasks extension, by `owner`: the result, or the error's code. */
async function tasksGet(mcp: DurableMcp, owner: TaskOwner, taskId: string): Promise<JsonObject | number> {
  const outcome = await mcp.server.dispatch({
    request: {
      kind: 'request',
      id: 1,
      method: 'tasks/get',
      params: {
        taskId,
        _meta: {
          [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION,
          [META_CLIENT_CAPABILITIES]: { extensions: { [TASKS_EXTENSION]: {} } },
        },
      },
    },
    auth: owner,
    signal: new AbortController().signal,
    header: undefined,
    emit: () => undefined,
  });
  return outcome.ok ? outcome.result : outcome.error.code;
}

await withPostgres('tasks/get statements on PostgreSQL', () => {
  describe('tasks/get on PostgreSQL', () => {
    const { pool, sent } = countingPool();
    const store = createPostgresTaskStore({ pool, schema: SCHEMA, listen: false });
    const mcp = createDurableMcp({
      toolSets: [],
      store,
      worker: false,
      now: () => NOW,
      tasks: { tasksGetRate: false },
    });
    const ids = { working: '', waiting: '', completed: '' };

    beforeAll(async () => {
      ids.working = (await store.create(newTask({ createdAt: T0 }))).id;
      ids.waiting = (await store.create(newTask({ createdAt: T0 }))).id;
      ids.completed = (await store.create(newTask({ createdAt: T0 }))).id;
      // A claimed task that has not finished is working as an unclaimed one is.
      for (let i = 0; i < 3; i++) {
        const run = await store.claim('w1', 60_000, T0 + 1);
        if (run === undefined) throw new Error('expected a runnable task');
        if (run.id === ids.working) continue;
        const outcome =
          run.id === ids.completed
            ? ({ kind: 'completed', result: { content: [{ type: 'text', text: 'done' }] } } as const)
            : ({ kind: 'input_required', requests: { go: REQUEST } } as const);
        expect(await store.finish(run.id, run.token, outcome, T0 + 2)).toBe(true);
      }
    });

    afterAll(async () => {
      await mcp.close();
      await pool.end();
      await dropSchema(SCHEMA);
    });

    /** The statements `fn` sent. */
    const statementsOf = async <T>(fn: () => Promise<T>): Promise<{ value: T; statements: string[] }> => {
      const from = sent.length;
      const value = await fn();
      return { value, statements: sent.slice(from) };
    };

    it('sends one statement for a working, a waiting and a finished task', async () => {
      const working = await statementsOf(() => tasksGet(mcp, ALICE, ids.working));
      expect(working.value).toMatchObject({ taskId: ids.working, status: 'working' });
      expect(working.statements).toHaveLength(1);

      const waiting = await statementsOf(() => tasksGet(mcp, ALICE, ids.waiting));
      expect(waiting.value).toMatchObject({ status: 'input_required', inputRequests: { go: REQUEST } });
      expect(waiting.statements).toHaveLength(1);

      const completed = await statementsOf(() => tasksGet(mcp, ALICE, ids.completed));
      expect(completed.value).toMatchObject({ status: 'completed' });
      expect(JSON.stringify(completed.value)).toContain('done');
      expect(completed.statements).toHaveLength(1);
    });

    it("sends one statement for another owner's task and for a missing one, which look alike", async () => {
      const other = await statementsOf(() => tasksGet(mcp, BOB, ids.working));
      const missing = await statementsOf(() => tasksGet(mcp, ALICE, newTaskId()));
      expect(typeof other.value).toBe('number');
      expect(other.value).toBe(missing.value);
      expect(other.statements).toHaveLength(1);
      expect(missing.statements).toHaveLength(1);
    });

    it('answers concurrent polls with fewer statements than polls, each as its caller may see it', async () => {
      const missingId = newTaskId();
      const polls: [TaskOwner, string][] = [
        ...Array.from({ length: 12 }, (_, i): [TaskOwner, string] => [
          ALICE,
          [ids.working, ids.waiting, ids.completed][i % 3]!,
        ]),
        [BOB, ids.working],
        [BOB, ids.completed],
        [ALICE, missingId],
        [{ tenant: 'other', principal: ALICE.principal }, ids.working],
      ];
      const { value, statements } = await statementsOf(() =>
        Promise.all(polls.map(([owner, id]) => tasksGet(mcp, owner, id))),
      );
      expect(statements.length).toBeGreaterThanOrEqual(1);
      expect(statements.length).toBeLessThan(polls.length);
      const statuses = {
        [ids.working]: 'working',
        [ids.waiting]: 'input_required',
        [ids.completed]: 'completed',
      };
      for (let i = 0; i < 12; i++) {
        const id = polls[i]![1];
        expect(value[i], `poll ${i}`).toMatchObject({ taskId: id, status: statuses[id] });
      }
      expect(value[1]).toMatchObject({ inputRequests: { go: REQUEST } });
      expect(JSON.stringify(value[2])).toContain('done');
      // Another principal's task, another tenant's and a missing one: one and the same error.
      const denied = value.slice(12);
      expect(typeof denied[0]).toBe('number');
      expect(denied).toEqual([denied[0], denied[0], denied[0], denied[0]]);
    });

    it('reads only the columns a snapshot needs, not every column of the task', async () => {
      const { statements } = await statementsOf(() => tasksGet(mcp, ALICE, ids.working));
      expect(statements[0]).not.toMatch(/\bt\.\*/);
      expect(statements[0]).not.toMatch(/\bargs\b|\bclient_caps\b/);
    });
  });
});

describe('the packed row of tasks/get on PostgreSQL', () => {
  it('unpacks each column of the JSON array under its name', () => {
    const r = [...OWNED_PACKED, 'outstanding', 'has_children'];
    const row = fromPacked({ r, result: 'result', error: 'error' }) as unknown as Record<string, unknown>;
    for (const name of r) expect(row[name], name).toBe(name);
    expect(row).toMatchObject({ result: 'result', error: 'error' });
    expect(Object.keys(row)).toHaveLength(r.length + 2);
  });
});
