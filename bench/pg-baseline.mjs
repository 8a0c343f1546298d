// Raw `pg` baseline for the benchmark: a child process (started by run.mjs over an IPC channel) that times
// single-row autocommit INSERTs and primary-key SELECTs on a task-shaped table in its own PostgreSQL schema, over
// as many concurrent connections as our store's pool has by default.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

/** Rows in the table the point-select loop reads from. */
export const LOOKUP_ROWS = 10_000;

// Same shape as the SQLite baseline's rows (and the core of our `tasks` rows): a random `task_…` text primary
// key, a few short columns, a ~200-byte JSON text. No secondary index, no trigger, no NOTIFY.
const COLUMNS = `id text PRIMARY KEY, tenant text NOT NULL, principal text NOT NULL, tool text NOT NULL,
  status text NOT NULL, created_at bigint NOT NULL, payload text NOT NULL`;
const PAYLOAD = JSON.stringify({
  arguments: { text: 'benchmark payload' },
  clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  statusMessage: 'The task is now in progress.',
  pad: 'x'.repeat(40),
});

const newId = () => `task_${randomBytes(24).toString('base64url')}`;

async function open(url, schema, connections) {
  const s = pg.escapeIdentifier(schema);
  const clients = [];
  for (let i = 0; i < connections; i++) {
    const client = new pg.Client({ connectionString: url, application_name: 'durable-mcp-bench-raw' });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
  }
  const [admin] = clients;
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
  const orders = clients.map(() => {
    const order = [...ids];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    return order;
  });
  // Named statements: parsed and planned once per connection, the least a statement can cost the server.
  const insertText = `INSERT INTO ${s}.inserts (id, tenant, principal, tool, status, created_at, payload)
    VALUES ($1, 'anonymous', 'anonymous', 'bench_task', 'working', $2, $3)`;
  const selectText = `SELECT * FROM ${s}.lookups WHERE id = $1 AND tenant = $2 AND principal = $3`;
  return {
    clients,
    ops: {
      // Outside any explicit transaction: each INSERT is its own autocommit transaction (one WAL flush, which
      // PostgreSQL shares between commits that arrive together).
      insert: (c) =>
        clients[c].query({ name: 'ins', text: insertText, values: [newId(), Date.now(), PAYLOAD] }),
      select: async (c, i) => {
        const ids = orders[c];
        const res = await clients[c].query({
          name: 'sel',
          text: selectText,
          values: [ids[i % ids.length], 'anonymous', 'anonymous'],
        });
        if (res.rowCount !== 1) throw new Error('point select found no row');
      },
    },
  };
}

/**
 * Runs one operation back to back on every connection for `seconds`; per-statement latency in ms for the
 * percentiles, and this process's CPU time per statement in µs (the PostgreSQL server's is not included).
 */
async function timeLoop(op, connections, seconds) {
  const latencies = [];
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  let last = start;
  const loop = async (c) => {
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
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 1000) / 1000;
  const count = latencies.length;
  const cpuUs = Math.round(((cpu.user + cpu.system) / count) * 10) / 10;
  return { count, seconds: (last - start) / 1000, p50: pct(0.5), p99: pct(0.99), cpuUs };
}

export async function servePgBaseline(url, schema, connections) {
  let db;
  try {
    db = await open(url, schema, connections);
    await db.ops.insert(0);
    await db.ops.select(0, 0);
  } catch (err) {
    process.send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  }
  const close = async () => {
    await Promise.all(db.clients.map((c) => c.end().catch(() => undefined)));
    process.exit(0);
  };
  process.on('message', async (msg) => {
    try {
      const op = db.ops[msg.op];
      if (op === undefined) throw new Error(`unknown operation ${msg.op}`);
      process.send({ type: 'result', ...(await timeLoop(op, connections, msg.seconds)) });
    } catch (err) {
      process.send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  });
  process.on('disconnect', close);
  process.on('SIGTERM', close);
  process.send({ type: 'ready', schema, connections, lookupRows: LOOKUP_ROWS });
}

if (process.argv[2] === '--serve-pg-baseline') {
  servePgBaseline(process.argv[3], process.argv[4], Number(process.argv[5]));
}
