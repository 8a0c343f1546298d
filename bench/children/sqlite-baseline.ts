// Raw better-sqlite3 baseline (started by the runner over an IPC channel): times single-row autocommit INSERTs and
// primary-key SELECTs on a task-shaped table, with our store's pragmas. Usage: sqlite-baseline.ts FILE
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { LOOKUP_ROWS, loopResult, PAYLOAD, serveOps, shuffle, type LoopResult } from './raw-loop.js';

// Same shape as our `tasks` rows: a random `task_…` TEXT primary key, a few short columns, a ~200-byte JSON text.
const COLUMNS = `id TEXT PRIMARY KEY, tenant TEXT NOT NULL, principal TEXT NOT NULL, tool TEXT NOT NULL,
  status TEXT NOT NULL, created_at INTEGER NOT NULL, payload TEXT NOT NULL`;

const newId = () => `task_${randomBytes(24).toString('base64url')}`;

type Op = (i: number) => void;

/** Opens the file the way src/stores/sqlite/database.ts does and checks the pragmas took effect. */
function open(path: string): Database.Database {
  for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
  const db = new Database(path);
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  const mode = db.pragma('journal_mode', { simple: true });
  const sync = db.pragma('synchronous', { simple: true });
  if (mode !== 'wal' || sync !== 2) {
    throw new Error(`pragmas not applied: journal_mode=${String(mode)}, synchronous=${String(sync)}`);
  }
  db.exec(`CREATE TABLE inserts (${COLUMNS}) STRICT; CREATE TABLE lookups (${COLUMNS}) STRICT;`);
  return db;
}

function prepare(db: Database.Database): Record<'insert' | 'select', Op> {
  const insert = db.prepare(
    `INSERT INTO inserts (id, tenant, principal, tool, status, created_at, payload)
     VALUES (?, 'anonymous', 'anonymous', 'bench_task', 'working', ?, ?)`,
  );
  const select = db.prepare(`SELECT * FROM lookups WHERE id = ? AND tenant = ? AND principal = ?`);
  const fill = db.prepare(
    `INSERT INTO lookups (id, tenant, principal, tool, status, created_at, payload)
     VALUES (?, 'anonymous', 'anonymous', 'bench_task', 'completed', ?, ?)`,
  );
  const ids: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < LOOKUP_ROWS; i++) {
      const id = newId();
      fill.run(id, Date.now(), PAYLOAD);
      ids.push(id);
    }
  })();
  // Visit the rows in random order so consecutive selects do not walk neighbouring pages.
  shuffle(ids);
  return {
    // Each run() outside a transaction is its own autocommit transaction: one WAL append + fsync.
    insert: () => void insert.run(newId(), Date.now(), PAYLOAD),
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
function timeLoop(op: Op, seconds: number): LoopResult {
  const latencies: number[] = [];
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
  return loopResult(latencies, elapsed, process.cpuUsage(cpuBefore), i);
}

const path = process.argv[2]!;
const db = open(path);
const ops = prepare(db);
ops.insert(0);
ops.select(0);
serveOps(ops, timeLoop);
const close = () => {
  db.close();
  process.exit(0);
};
process.on('disconnect', close);
process.on('SIGTERM', close);
process.send!({ type: 'ready', path, lookupRows: LOOKUP_ROWS });
