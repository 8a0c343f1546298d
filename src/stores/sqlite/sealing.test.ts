// Sealing at rest in the SQLite store (sealing.contract.ts), with raw access to its file.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import { createPayloadCipher, parseKeyring } from '../../tasks/payload-cipher.js';
import { sealingContract } from '../sealing.contract.js';
import { createSqliteTaskStore } from './task-store.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

sealingContract('sqlite', {
  async open(keyring) {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-sealing-'));
    dirs.push(dir);
    const path = join(dir, 'tasks.db');
    const cipher = createPayloadCipher(parseKeyring(keyring));
    const store = createSqliteTaskStore({ path, cipher });
    const raw = new Database(path);
    return {
      store,
      raw: {
        reopen: async () => createSqliteTaskStore({ path, cipher }),
        async exec(sql, params) {
          raw.prepare(sql).run(...params);
        },
        // The file and its WAL as bytes: whatever the store wrote, committed or not yet checkpointed.
        async dump() {
          return [path, `${path}-wal`]
            .filter(existsSync)
            .map((p) => readFileSync(p).toString('latin1'))
            .join('');
        },
      },
    };
  },
});
