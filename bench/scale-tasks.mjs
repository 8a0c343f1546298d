// Fills a SQLite task store for the benchmark's stored-task scale rows (started by run.mjs as a child process).
// Usage: node bench/scale-tasks.mjs SOURCE TARGET COUNT SAMPLE
// SOURCE is a store our server has migrated and in which it has run exactly one task to completion. TARGET becomes
// a copy of it (VACUUM INTO) holding COUNT tasks: the real one and COUNT - 1 clones of its row (every column as the
// server wrote it, so the same owner, tool and payloads) with new random ids and creation times spread over the last
// COUNT ms, all expiring a day after creation. Rows go in in id order, in large transactions, with
// synchronous=OFF and no journal (a crash would only lose this scratch file); the file is switched back to WAL at
// the end. Prints one JSON line: { count, ms, bytes, sample }, where `sample` holds SAMPLE ids picked at random
// from the whole table (for the requests of the rows).
import { randomBytes, randomInt } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';

/** Rows per transaction. */
const BATCH = 100_000;
/** Time to live of every stored task: far beyond any benchmark run, so no TTL sweep touches them. */
const TTL_MS = 86_400_000;

const newId = () => `task_${randomBytes(24).toString('base64url')}`;

function fill(source, target, count, sampleSize) {
  const started = performance.now();
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(target + suffix, { force: true });
  const src = new Database(source, { fileMustExist: true });
  let template;
  try {
    const rows = src.prepare('SELECT * FROM tasks').all();
    if (rows.length !== 1 || rows[0].status !== 'completed') {
      throw new Error(`${source}: expected exactly one completed task, found ${rows.length}`);
    }
    template = rows[0];
    src.prepare('VACUUM INTO ?').run(target);
  } finally {
    src.close();
  }

  const db = new Database(target, { fileMustExist: true });
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const columns = Object.keys(template);
    const insert = db.prepare(
      `INSERT INTO tasks (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    );
    const ids = Array.from({ length: count - 1 }, newId).sort();
    const now = Date.now();
    const createdAt = (i) => now - (count - i);
    db.prepare('UPDATE tasks SET ttl_ms = ?, expires_at = ? WHERE id = ?').run(
      TTL_MS,
      createdAt(count - 1) + TTL_MS,
      template.id,
    );
    // One parameter array, reused: only the id and the times change from row to row.
    const values = columns.map((c) => template[c]);
    const at = (name) => columns.indexOf(name);
    const [idAt, createdAtAt, updatedAtAt, ttlAt, expiresAt] = [
      'id',
      'created_at',
      'updated_at',
      'ttl_ms',
      'expires_at',
    ].map(at);
    if ([idAt, createdAtAt, updatedAtAt, ttlAt, expiresAt].includes(-1)) {
      throw new Error(
        `${source}: the tasks table lacks one of id, created_at, updated_at, ttl_ms, expires_at`,
      );
    }
    values[ttlAt] = TTL_MS;
    const batch = db.transaction((from, to) => {
      for (let i = from; i < to; i++) {
        const created = createdAt(i);
        values[idAt] = ids[i];
        values[createdAtAt] = created;
        values[updatedAtAt] = created + 7;
        values[expiresAt] = created + TTL_MS;
        insert.run(values);
      }
    });
    for (let from = 0; from < ids.length; from += BATCH) batch(from, Math.min(ids.length, from + BATCH));
    const stored = db.prepare('SELECT count(*) FROM tasks').pluck().get();
    if (stored !== count) throw new Error(`${target}: ${stored} tasks stored, expected ${count}`);
    db.pragma('journal_mode = WAL');
    ids.push(template.id);
    const sample = Array.from({ length: Math.min(sampleSize, ids.length) }, () => ids[randomInt(ids.length)]);
    return {
      count,
      ms: Math.round(performance.now() - started),
      bytes: statSync(target).size,
      sample,
    };
  } finally {
    db.close();
  }
}

const [source, target, count, sample] = process.argv.slice(2);
try {
  process.stdout.write(JSON.stringify(fill(source, target, Number(count), Number(sample))) + '\n');
} catch (err) {
  process.stderr.write(`scale-tasks: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
