// Raw better-sqlite3 baseline for the benchmark: a child process (started by run.mjs over an IPC channel) that
// times single-row autocommit INSERTs and primary-key SELECTs on a task-shaped table, with our store's pragmas.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';

/** Rows in the table the point-select loop reads from. */
export const LOOKUP_ROWS = 10_000;

// Same shape as our `tasks` rows: a random `task_…` TEXT primary key, a few short columns, a ~200-byte JSON text.
const COLUMNS = `id TEXT PRIMARY KEY, tenant TEXT NOT NULL, principal TEXT NOT NULL, tool TEXT NOT NULL,
  status TEXT NOT NULL, created_at INTEGER NOT NULL, payload TEXT NOT NULL`;
const PAYLOAD = JSON.stringify({
  arguments: { text: 'benchmark payload' },
  clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  statusMessage: 'The task is now in progress.',
  pad: 'x'.repeat(40),
});

const newId = () => `task_${randomBytes(24).toString('base64url')}`;

/** Opens the file the way src/stores/sqlite/database.ts does and checks the pragmas took effect. */
function open(path) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  const db = new Database(path);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  const mode = db.pragma('journal_mode', { simple: true });
  const sync = db.pragma('synchronous', { simple: true });
  if (mode !== 'wal' || sync !== 2)
    throw new Error(`pragmas not applied: journal_mode=${mode}, synchronous=${sync}`);
  db.exec(`CREATE TABLE inserts (${COLUMNS}) STRICT; CREATE TABLE lookups (${COLUMNS}) STRICT;`);
  return db;
}

function prepare(db) {
  const insert = db.prepare(
    `INSERT INTO inserts (id, tenant, principal, tool, status, created_at, payload)
     VALUES (?, 'anonymous', 'anonymous', 'bench_task', 'working', ?, ?)`,
  );
  const select = db.prepare(`SELECT * FROM lookups WHERE id = ? AND tenant = ? AND principal = ?`);
  const fill = db.prepare(
    `INSERT INTO lookups (id, tenant, principal, tool, status, created_at, payload)
     VALUES (?, 'anonymous', 'anonymous', 'bench_task', 'completed', ?, ?)`,
  );
  const ids = [];
  db.transaction(() => {
    for (let i = 0; i < LOOKUP_ROWS; i++) {
      const id = newId();
      fill.run(id, Date.now(), PAYLOAD);
      ids.push(id);
    }
  })();
  // Visit the rows in random order so consecutive selects do not walk neighbouring pages.
  for (let i = ids.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return {
    // Each run() outside a transaction is its own autocommit transaction: one WAL append + fsync.
    insert: () => insert.run(newId(), Date.now(), PAYLOAD),
    select: (i) => {
      const row = select.get(ids[i % ids.length], 'anonymous', 'anonymous');
      if (row === undefined) throw new Error('point select found no row');
    },
  };
}

/**
 * Runs one operation back to back for `seconds`; per-operation latency in ms for the percentiles, and this
 * process's CPU time per operation in µs (time spent waiting for fsync is not CPU time).
 */
function timeLoop(op, seconds) {
  const latencies = [];
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  let now = start;
  let i = 0;
  while (now < end) {
    op(i++);
    const after = performance.now();
    latencies.push(after - now);
    now = after;
  }
  const elapsed = (now - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const pct = (p) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] * 1000) / 1000;
  const cpuUs = Math.round(((cpu.user + cpu.system) / i) * 10) / 10;
  return { count: i, seconds: elapsed, p50: pct(0.5), p99: pct(0.99), cpuUs };
}

export function serveSqliteBaseline(path) {
  const db = open(path);
  const ops = prepare(db);
  ops.insert();
  ops.select(0);
  process.on('message', (msg) => {
    try {
      const op = ops[msg.op];
      if (op === undefined) throw new Error(`unknown operation ${msg.op}`);
      process.send({ type: 'result', ...timeLoop(op, msg.seconds) });
    } catch (err) {
      process.send({ type: 'error', message: err instanceof Error ? err.message : String(err) });
    }
  });
  process.on('disconnect', () => {
    db.close();
    process.exit(0);
  });
  process.on('SIGTERM', () => {
    db.close();
    process.exit(0);
  });
  process.send({ type: 'ready', path, lookupRows: LOOKUP_ROWS });
}

if (process.argv[2] === '--serve-sqlite-baseline') serveSqliteBaseline(process.argv[3]);
