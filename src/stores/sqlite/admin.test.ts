// The operators' port on SQLite: the shared TaskAdmin contract on a real file (a peer on the same file plays another
// process), and the plans of the searches an operator runs most.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { TaskStore } from '../../tasks/store.js';
import { runTaskAdminContract } from '../task-admin.contract.js';
import { createSqliteTaskStore } from './task-store.js';

const dirs: string[] = [];
const opened: TaskStore[] = [];
const open = (path: string) => {
  const store = createSqliteTaskStore({ path });
  opened.push(store);
  return store;
};

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

let path = '';
runTaskAdminContract({
  name: 'sqlite (file)',
  newStore: () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-admin-'));
    dirs.push(dir);
    return open((path = join(dir, 'tasks.db')));
  },
  openPeer: () => open(path),
});
