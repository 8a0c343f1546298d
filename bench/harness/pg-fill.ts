// Filling the PostgreSQL stored-task schemas of the operator list rows before their servers start: the store's own
// migrations create each schema (the tasks table and its indexes, the operators' search indexes among them, exactly
// as a server makes them), then one server-side INSERT … SELECT over generate_series writes its completed tasks, and
// ANALYZE gives the planner the statistics autovacuum would have gathered on a live database.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
// The migrations as the servers under test run them (`npm run bench` builds dist/ first).
import { migratePostgres } from '../../dist/src/postgres.js';
import { ROOT, SCALE_LARGE, SCALE_SMALL, SCALE_TOOLS } from '../config.js';
import { fmtInt, log } from '../format.js';
import type { FillSummary, PgScaleFill } from '../types.js';
import type { PgRun } from './postgres.js';

/** Time to live of every stored task: far beyond any benchmark run, so no TTL sweep touches them. */
const TTL_MS = 86_400_000;

const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The columns of a bench_task our server ran to completion, as it wrote them (owner of anonymous mode, empty
 * arguments, its result with the server's info, the status message it kept from `working`, attempt 1, revision 2,
 * updated 19 ms after creation, its place in line its creation time); the TTL is a day, as in the SQLite stores.
 */
const RESULT = JSON.stringify({
  resultType: 'complete',
  content: [{ type: 'text', text: 'ok' }],
  _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'durable-mcp', version } },
});
const CLIENT_CAPS = JSON.stringify({ extensions: { 'io.modelcontextprotocol/tasks': {} } });

/**
 * $1 tools, $2 their count, $3 TTL, $4 result, $5 client capabilities, $6 tasks, $7 now: task g (0-based) is of
 * tool $1[g mod $2] and was created at now - $6 + g (one per ms, the newest last), with a random id (`task_` and 32
 * hex digits; the ids our server makes are 32 base64url characters).
 */
const fillSql = (s: string) => `
  INSERT INTO ${s}.tasks (id, tenant, principal, tool, args, status, status_message, created_at, updated_at, ttl_ms,
    poll_interval_ms, expires_at, result, replay_after_crash, client_caps, runnable, attempt, revision, fair_at)
  SELECT 'task_' || md5(random()::text || g::text), 'default', 'anonymous', ($1::text[])[1 + g % $2::int], '{}',
    'completed', 'The task is now in progress.', t.c, t.c + 19, $3::bigint, 1000, t.c + $3::bigint, $4::text, true,
    $5::jsonb, false, 1, 2, t.c
  FROM generate_series(0, $6::int - 1) AS g, LATERAL (SELECT $7::bigint - $6::int + g AS c) AS t`;

/** Migrates `schema` and fills it with `count` completed tasks; returns the count, the time and the table's size. */
async function fillSchema(url: string, schema: string, count: number): Promise<FillSummary> {
  const started = performance.now();
  await migratePostgres({ connectionString: url, schema });
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const s = pg.escapeIdentifier(schema);
    const params = [SCALE_TOOLS, SCALE_TOOLS.length, TTL_MS, RESULT, CLIENT_CAPS, count, Date.now()];
    await client.query(fillSql(s), params);
    await client.query(`ANALYZE ${s}.tasks`);
    const { rows } = await client.query<{ n: number; bytes: string }>(
      `SELECT (SELECT count(*)::int FROM ${s}.tasks) AS n, pg_total_relation_size($1::regclass) AS bytes`,
      [`${s}.tasks`],
    );
    const stored = rows[0]!.n;
    if (stored !== count) throw new Error(`${schema}: ${stored} tasks stored, expected ${count}`);
    return { count, ms: Math.round(performance.now() - started), bytes: Number(rows[0]!.bytes) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Fills the two schemas of the PostgreSQL operator list rows (SCALE_SMALL and SCALE_LARGE tasks), one at a time. */
export async function preparePgScale(plan: PgRun): Promise<PgScaleFill> {
  const started = performance.now();
  const fill = async (schema: string, count: number) => {
    const filled = await fillSchema(plan.url, schema, count).catch((err: unknown) => {
      throw new Error(`filling ${schema} with ${fmtInt(count)} tasks failed: ${(err as Error).message}`);
    });
    log(
      `pg scale: ${fmtInt(count)} stored tasks filled in ${filled.ms} ms ` +
        `(${(filled.bytes / 2 ** 20).toFixed(0)} MiB with indexes)`,
    );
    return filled;
  };
  const small = await fill(plan.schemas['ours-pg-ops-small'], SCALE_SMALL);
  const large = await fill(plan.schemas['ours-pg-ops-large'], SCALE_LARGE);
  return { small, large, totalMs: Math.round(performance.now() - started) };
}
