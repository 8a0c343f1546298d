// Raw `pg` baseline (started by the runner over an IPC channel): times single-row autocommit INSERTs (with or
// without a NOTIFY in the same statement) and primary-key SELECTs on a task-shaped table in its own PostgreSQL
// schema, over as many concurrent connections as our store's pool has by default. Usage: pg-baseline.ts URL SCHEMA
// CONNECTIONS
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { LOOKUP_ROWS, loopResult, PAYLOAD, serveOps, shuffle, type LoopResult } from './raw-loop.js';

// Same shape as the SQLite baseline's rows (and the core of our `tasks` rows): a random `task_…` text primary
// key, a few short columns, a ~200-byte JSON text. No secondary index, no trigger, no NOTIFY.
const COLUMNS = `id text PRIMARY KEY, tenant text NOT NULL, principal text NOT NULL, tool text NOT NULL,
  status text NOT NULL, created_at bigint NOT NULL, payload text NOT NULL`;

const newId = () => `task_${randomBytes(24).toString('base64url')}`;

/** One statement on connection `c` (`i`: its position in the loop). */
type Op = (c: number, i: number) => Promise<unknown>;

async function connect(url: string, connections: number): Promise<pg.Client[]> {
  const clients: pg.Client[] = [];
  for (let i = 0; i < connections; i++) {
    const client = new pg.Client({ connectionString: url, application_name: 'durable-mcp-bench-raw' });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
  }
  return clients;
}

/** Creates the schema and its tables, fills the lookup table; the ids, in a random order per connection. */
async function createTables(admin: pg.Client, s: string, connections: number): Promise<string[][]> {
  await admin.query(`CREATE SCHEMA ${s}`);
  await admin.query(`CREATE TABLE ${s}.inserts (${COLUMNS}); CREATE TABLE ${s}.lookups (${COLUMNS})`);
  const ids = Array.from({ length: LOOKUP_ROWS }, newId);
  await admin.query(
    `INSERT INTO ${s}.lookups (id, tenant, principal, tool, status, created_at, payload)
     SELECT id, 'anonymous', 'anonymous', 'bench_task', 'completed', $2, $3 FROM unnest($1::text[]) AS x(id)`,
    [ids, Date.now(), PAYLOAD],
  );
  await admin.query(`ANALYZE ${s}.lookups`);
  // Each connection visits the rows in its own random order.
  return Array.from({ length: connections }, () => shuffle([...ids]));
}

async function open(url: string, schema: string, connections: number) {
  const s = pg.escapeIdentifier(schema);
  const clients = await connect(url, connections);
  const orders = await createTables(clients[0]!, s, connections);
  // A connection listening on the notifying inserts' channel, as each replica's change feed listens on its schema's.
  const channel = `${schema}_raw_changes`;
  const [listener] = await connect(url, 1);
  await listener!.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
  clients.push(listener!);
  // Named statements: parsed and planned once per connection, the least a statement can cost the server.
  const insertText = `INSERT INTO ${s}.inserts (id, tenant, principal, tool, status, created_at, payload)
    VALUES ($1, 'anonymous', 'anonymous', 'bench_task', 'working', $2, $3)`;
  const selectText = `SELECT * FROM ${s}.lookups WHERE id = $1 AND tenant = $2 AND principal = $3`;
  // The same insert with a notification of the new row in the same statement, as a creation batch sends one per task.
  const notifyText = `WITH ins AS (${insertText} RETURNING id)
    SELECT pg_notify($4, json_build_object('origin', 'raw', 'taskId', ins.id)::text) FROM ins`;
  const ops: Record<'insert' | 'notify' | 'select', Op> = {
    // Outside any explicit transaction: each INSERT is its own autocommit transaction (one WAL flush, which
    // PostgreSQL shares between commits that arrive together).
    insert: (c) =>
      clients[c]!.query({ name: 'ins', text: insertText, values: [newId(), Date.now(), PAYLOAD] }),
    // A transaction that notified holds the notification queue's lock from before its commit until the commit is
    // flushed: these commit one after another, each with its own WAL flush. Its rate is the model's `n`.
    notify: (c) =>
      clients[c]!.query({
        name: 'ntf',
        text: notifyText,
        values: [newId(), Date.now(), PAYLOAD, channel],
      }),
    select: async (c, i) => {
      const ids = orders[c]!;
      const res = await clients[c]!.query({
        name: 'sel',
        text: selectText,
        values: [ids[i % ids.length], 'anonymous', 'anonymous'],
      });
      if (res.rowCount !== 1) throw new Error('point select found no row');
    },
  };
  return { clients, ops };
}

/**
 * Runs one operation back to back on every connection for `seconds`; per-statement latency in ms for the
 * percentiles, and this process's CPU time per statement in µs (the PostgreSQL server's is not included).
 */
async function timeLoop(op: Op, connections: number, seconds: number): Promise<LoopResult> {
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  let last = start;
  const loop = async (c: number) => {
    let now = performance.now();
    for (let i = 0; now < end; i++) {
      await op(c, i);
      const after = performance.now();
      latencies.push(after - now);
      now = after;
    }
    last = Math.max(last, now);
  };
  await Promise.all(Array.from({ length: connections }, (_, c) => loop(c)));
  return loopResult(latencies, (last - start) / 1000, process.cpuUsage(cpuBefore));
}

async function servePgBaseline(url: string, schema: string, connections: number): Promise<void> {
  let db: Awaited<ReturnType<typeof open>>;
  try {
    db = await open(url, schema, connections);
    await db.ops.insert(0, 0);
    await db.ops.notify(0, 0);
    await db.ops.select(0, 0);
  } catch (err) {
    process.send!({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  }
  const close = async () => {
    await Promise.all(db.clients.map((c) => c.end().catch(() => undefined)));
    process.exit(0);
  };
  serveOps(db.ops, (op, seconds) => timeLoop(op, connections, seconds));
  process.on('disconnect', () => void close());
  process.on('SIGTERM', () => void close());
  process.send!({ type: 'ready', schema, connections, lookupRows: LOOKUP_ROWS });
}

void servePgBaseline(process.argv[2]!, process.argv[3]!, Number(process.argv[4]));
