// Opening a SQLite store file at start-up while other processes hold its locks: waited for, never failed at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getOrCreateMeta, openSqlite, retryWhileBusy } from './database.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'durable-mcp-open-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const busy = (): Error => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

/** Another connection (in a thread of its own, as another process would be) holds the write lock for `ms`. */
async function holdWriteLock(path: string, ms: number): Promise<Worker> {
  const worker = new Worker(
    `const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
     const { parentPort, workerData } = require('node:worker_threads');
     const db = new Database(workerData.path);
     db.exec('BEGIN IMMEDIATE');
     parentPort.postMessage('locked');
     setTimeout(() => { db.exec('COMMIT'); db.close(); parentPort.postMessage('released'); }, workerData.ms);`,
    { eval: true, workerData: { path, ms } },
  );
  await new Promise((resolve) => worker.once('message', resolve));
  return worker;
}

describe('SQLite start-up under lock contention', () => {
  it('creates the server-wide secret once another process lets go of the lock, within the busy timeout', async () => {
    const path = join(dir, 'tasks.db');
    openSqlite({ path }).close();
    const db = openSqlite({ path });
    const worker = await holdWriteLock(path, 150);
    expect(getOrCreateMeta(db, 'secret', () => 's1')).toBe('s1');
    expect(getOrCreateMeta(db, 'secret', () => 's2')).toBe('s1');
    db.close();
    await worker.terminate();
  });

  it('retries while SQLite answers busy, rethrows anything else at once, and gives up at the deadline', () => {
    let calls = 0;
    expect(
      retryWhileBusy(() => {
        if (++calls < 3) throw busy();
        return 'done';
      }, 1_000),
    ).toBe('done');
    expect(calls).toBe(3);
    calls = 0;
    const other = new Error('disk I/O error');
    expect(() =>
      retryWhileBusy(() => {
        calls++;
        throw other;
      }, 1_000),
    ).toThrow(other);
    expect(calls).toBe(1);
    let clock = 0;
    expect(() =>
      retryWhileBusy(
        () => {
          clock += 400;
          throw busy();
        },
        1_000,
        () => clock,
      ),
    ).toThrow('database is locked');
    expect(clock).toBe(1_200);
  });
});
