// The client journal on a SQLite file: task ids, where they live and their last known status.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

const TERMINAL = ['completed', 'failed', 'cancelled'];

/** Structurally the client's Journal port (stores do not import the client). */
export interface JournalRecord {
  taskId: string;
  server: string;
  tool: string;
  createdAt: number;
  status: string;
}

export interface SqliteJournal {
  record(entry: JournalRecord): void;
  update(taskId: string, status: string): void;
  unfinished(server?: string): JournalRecord[];
  forget(taskId: string): void;
  close(): void;
}

export function createSqliteJournal(path: string): SqliteJournal {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.exec(`CREATE TABLE IF NOT EXISTS journal (
    task_id TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL
  ) STRICT`);
  const insert = db.prepare(
    `INSERT INTO journal (task_id, server, tool, created_at, status) VALUES (@taskId, @server, @tool, @createdAt, @status)
     ON CONFLICT (task_id) DO UPDATE SET status = excluded.status`,
  );
  const update = db.prepare(`UPDATE journal SET status = ? WHERE task_id = ?`);
  const all = db.prepare(`SELECT task_id, server, tool, created_at, status FROM journal ORDER BY created_at`);
  const remove = db.prepare(`DELETE FROM journal WHERE task_id = ?`);
  type Row = { task_id: string; server: string; tool: string; created_at: number; status: string };
  return {
    record: (entry) => void insert.run(entry),
    update: (taskId, status) => void update.run(status, taskId),
    unfinished(server) {
      return (all.all() as Row[])
        .filter((r) => !TERMINAL.includes(r.status) && (server === undefined || r.server === server))
        .map((r) => ({
          taskId: r.task_id,
          server: r.server,
          tool: r.tool,
          createdAt: r.created_at,
          status: r.status,
        }));
    },
    forget: (taskId) => void remove.run(taskId),
    close: () => db.close(),
  };
}
