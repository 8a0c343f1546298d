// A limit of 2 on the key "K" across three `durable-mcp serve` processes on one store (a SQLite file; a PostgreSQL
// schema): 200 tasks, processes SIGKILLed at random points and started again. Every task completes, and never more
// than 2 K-tasks ran at once: by the runs' own log (a run of a killed process ends at its death, though its slot is
// held until its lease lapses) and by the step times the store keeps.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { rng } from '../../scripts/chaos/harness/random.js';
import { createHttpClient, type McpHttpClient } from '../../src/advanced.js';
import type { JsonObject } from '../../src/wire/jsonrpc.js';
import { startServe, type ServeProcess } from '../support/cli.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';
import { busiest, heldAt, mayHaveLapsed, readRunLog, type Interval } from '../support/run-intervals.js';

const TOOLS = fileURLToPath(new URL('../fixtures/tools/limited-tools.mjs', import.meta.url));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const TERMINAL = ['completed', 'failed', 'cancelled'];
const TASK_COUNT = 200;
const KILLS = 4;
const LIMIT = 2;
const LEASE_MS = 3_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where the processes keep their tasks, and how the test reads the times of the stored steps. */
interface StoreUnderTest {
  args: string[];
  stepTimes(): Promise<StepTime[]>;
}

/** When a task's step started and when its value was saved, as the store keeps them. */
interface StepTime extends Interval {
  task: string;
}

const procs: ServeProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await p.exited;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

interface Proc {
  proc: ServeProcess;
  pid: string;
  client: McpHttpClient;
}

async function limitUnderKills(store: StoreUnderTest): Promise<void> {
  const seed = Number(process.env.DURABLE_MCP_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const random = rng(seed);
  const budgetEnd = Date.now() + 70_000;
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-limit-kills-'));
  // DURABLE_MCP_TEST_KEEP_LOGS keeps the runs' log for a look after a failure.
  if (process.env.DURABLE_MCP_TEST_KEEP_LOGS === undefined) dirs.push(dir);
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  const start = async (): Promise<Proc> => {
    // Short leases, so that a killed run's slot lapses soon; not shorter, for a process that stalls longer than its
    // lease (a loaded machine) still runs the handler it had begun when it resumes, beside the run that took the task
    // over: the store fences what such a run writes, not what it does. No caps on tasks/get or active tasks.
    const proc = await startServe(
      [
        ...[
          '--port',
          '0',
          '--tools',
          TOOLS,
          '--lease-ms',
          String(LEASE_MS),
          '--concurrency',
          '4',
          '--no-audit',
        ],
        ...['--tasks-get-rate', '0', '--max-active-tasks', '0', ...store.args],
      ],
      20_000,
      { DURABLE_MCP_TEST_LOG: logFile },
    );
    procs.push(proc);
    return {
      proc,
      pid: String(proc.child.pid),
      client: createHttpClient({ url: proc.url, capabilities: TASKS }),
    };
  };
  const live: Proc[] = await Promise.all([start(), start(), start()]);
  const call = async (method: string, params: JsonObject): Promise<JsonObject> =>
    (await random.pick(live).client.request(method, params, { signal: AbortSignal.timeout(10_000) })).result;

  // All tasks are created before the first kill, so no creation is lost with its answer.
  const ids: string[] = [];
  for (let k = 0; k < TASK_COUNT; k += 20) {
    const batch = Array.from({ length: Math.min(20, TASK_COUNT - k) }, async (_, j) => {
      const r = await call('tools/call', {
        name: 'limited_job',
        arguments: { n: k + j, ms: random.int(20, 80) },
      });
      expect(r.resultType).toBe('task');
      return String(r.taskId);
    });
    ids.push(...(await Promise.all(batch)));
  }

  // Kills at random points, mostly of a process in the middle of a run of K; each killed process is replaced.
  const killedAt = new Map<string, number>();
  const running = (p: Proc): boolean =>
    readRunLog(readFileSync(logFile, 'utf8'), killedAt).open.some((r) => r.pid === p.pid);
  for (let k = 0; k < KILLS; k++) {
    await sleep(random.int(200, 1_200));
    // Mostly in the middle of a run: a moment some process runs one (the key may be held up by a lapsing lease).
    for (let waited = 0; waited < 3_000 && !live.some(running); waited += 50) await sleep(50);
    const busy = live.filter(running);
    const victim = random.chance(0.8) && busy.length > 0 ? random.pick(busy) : random.pick(live);
    live.splice(live.indexOf(victim), 1);
    victim.proc.child.kill('SIGKILL');
    await victim.proc.exited;
    killedAt.set(victim.pid, Date.now());
    live.push(await start());
  }

  // Every task ends, completed with its own result.
  const final = new Map<string, JsonObject>();
  while (final.size < ids.length && Date.now() < budgetEnd) {
    const pending = ids.filter((id) => !final.has(id));
    for (let k = 0; k < pending.length; k += 25) {
      await Promise.all(
        pending.slice(k, k + 25).map(async (taskId) => {
          const t = await call('tasks/get', { taskId });
          if (TERMINAL.includes(String(t.status))) final.set(taskId, t);
        }),
      );
    }
    if (final.size < ids.length) await sleep(200);
  }
  expect(
    ids.filter((id) => !final.has(id)),
    'tasks not ended within the budget',
  ).toEqual([]);
  const results = ids.map((id) => {
    const t = final.get(id) as { status: string; result?: { content?: { text?: string }[] } };
    return `${t.status} ${t.result?.content?.[0]?.text ?? ''}`;
  });
  expect(results).toEqual(ids.map((_, n) => `completed done ${n}`));

  // Never more than the limit at once: every run from the log, the runs of killed processes ending at their death.
  // A run that may have lost its lease while its process lived on (a process frozen on a loaded machine; a run that
  // took a second) is left out: its slot was the store's to give, as a dead process's.
  const log = readRunLog(readFileSync(logFile, 'utf8'), killedAt);
  expect(log.problems).toEqual([]);
  expect(log.open, 'runs of live processes that never ended').toEqual([]);
  const { runs, freezes } = log;
  expect(new Set(runs.map((r) => r.task))).toEqual(new Set(ids));
  const lapsed = new Set(runs.filter((r) => mayHaveLapsed(r, freezes, LEASE_MS, 1_000)));
  const held = runs.filter((r) => !lapsed.has(r));
  const busy = busiest(held);
  const overlapping = heldAt(held, busy.at);
  const theirs = runs.filter((r) => overlapping.some((o) => o.task === r.task));
  const around = JSON.stringify({ kills: [...killedAt], freezes, busy, overlapping, theirs, logFile });
  expect(busy.most, `runs at once: ${around}`).toBeLessThanOrEqual(LIMIT);
  expect(busy.most).toBe(LIMIT); // the key was saturated: the check could have failed
  expect(lapsed.size, 'most runs are checked').toBeLessThan(runs.length / 4);
  const cut = runs.filter((r) => r.killed).length;
  expect(cut, 'no kill hit a run').toBeGreaterThan(0);

  // And by the store's own record: when the step of each task started and when its value was saved (fenced by the
  // run's token), but for tasks with a run left out above.
  const stored = await store.stepTimes();
  expect(stored).toHaveLength(TASK_COUNT);
  const unsure = new Set([...lapsed].map((r) => r.task));
  const storedBusy = busiest(stored.filter((row) => !unsure.has(row.task)));
  expect(storedBusy.most, JSON.stringify(heldAt(stored, storedBusy.at))).toBeLessThanOrEqual(LIMIT);
  console.log(
    `limit under kills: seed ${seed}; ${runs.length} runs for ${TASK_COUNT} tasks, ${cut} cut by ${KILLS} kills, ` +
      `${lapsed.size} left out (${freezes.length} freezes); most at once ${busy.most} (log), ` +
      `${storedBusy.most} (stored steps)`,
  );
}

describe('a concurrency limit across three processes on one SQLite file, with SIGKILLs', () => {
  it(`never runs more than ${LIMIT} tasks of the key at once over ${TASK_COUNT} tasks`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-limit-db-'));
    dirs.push(dir);
    const file = join(dir, 'tasks.db');
    await limitUnderKills({
      args: ['--store', file],
      stepTimes: async () => {
        const db = new Database(file, { readonly: true });
        try {
          const rows = db
            .prepare(
              "SELECT task_id AS task, started_at AS start, saved_at AS end FROM task_steps WHERE name = 'work'",
            )
            .all() as StepTime[];
          return rows;
        } finally {
          db.close();
        }
      },
    });
  }, 90_000);
});

await withPostgres('a concurrency limit across three processes on one PostgreSQL schema', () => {
  describe('a concurrency limit across three processes on one PostgreSQL schema, with SIGKILLs', () => {
    const schema = `dmcp_limit_kills_${randomBytes(5).toString('hex')}`;
    afterEach(() => dropSchema(schema));
    it(`never runs more than ${LIMIT} tasks of the key at once over ${TASK_COUNT} tasks`, async () => {
      await limitUnderKills({
        args: ['--store', TEST_POSTGRES_URL, '--pg-schema', schema],
        stepTimes: async () => {
          const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
          await client.connect();
          try {
            const { rows } = await client.query<{ task: string; start: string; end: string }>(
              `SELECT task_id AS task, started_at AS start, saved_at AS end FROM ${pg.escapeIdentifier(schema)}.task_steps
               WHERE name = 'work'`,
            );
            return rows.map((r) => ({ task: r.task, start: Number(r.start), end: Number(r.end) }));
          } finally {
            await client.end();
          }
        },
      });
    }, 90_000);
  });
});
