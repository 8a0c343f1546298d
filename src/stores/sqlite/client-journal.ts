// The client journal on a SQLite file: task ids, where they live and their last known status, and the calls whose
// answers have not arrived yet. The file's schema version is PRAGMA user_version; migrations only go forward.
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
  idempotencyKey?: string;
}

export interface PendingCallRecord {
  idempotencyKey: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  createdAt: number;
}

export interface SqliteJournal {
  record(entry: JournalRecord): void;
  update(taskId: string, status: string): void;
  unfinished(server?: string): JournalRecord[];
  forget(taskId: string): void;
  beginCall(call: PendingCallRecord): void;
  endCall(idempotencyKey: string): void;
  pendingCalls(server?: string): PendingCallRecord[];
  close(): void;
}

/** Version 1: the journal of tasks (as first released). Version 2: pending calls and the key of each task. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS journal (
    task_id TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL
  ) STRICT`,
  `ALTER TABLE journal ADD COLUMN idempotency_key TEXT;
   CREATE TABLE calls (
    idempotency_key TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT`,
];

function migrate(db: Database.Database): void {
  const apply = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    // A file of the first release has the journal table and user_version 0: its CREATE is a no-op.
    for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v] as string);
    if (version < MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  apply.immediate();
}

export function createSqliteJournal(path: string): SqliteJournal {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  const insert = db.prepare(
    `INSERT INTO journal (task_id, server, tool, created_at, status, idempotency_key)
     VALUES (@taskId, @server, @tool, @createdAt, @status, @idempotencyKey)
     ON CONFLICT (task_id) DO UPDATE SET status = excluded.status`,
  );
  const update = db.prepare(`UPDATE journal SET status = ? WHERE task_id = ?`);
  const all = db.prepare(
    `SELECT task_id, server, tool, created_at, status, idempotency_key FROM journal ORDER BY created_at`,
  );
  const remove = db.prepare(`DELETE FROM journal WHERE task_id = ?`);
  const begin = db.prepare(
    `INSERT OR REPLACE INTO calls (idempotency_key, server, tool, args, created_at) VALUES (?, ?, ?, ?, ?)`,
  );
  const end = db.prepare(`DELETE FROM calls WHERE idempotency_key = ?`);
  const pending = db.prepare(
    `SELECT idempotency_key, server, tool, args, created_at FROM calls ORDER BY created_at`,
  );
  type Row = {
    task_id: string;
    server: string;
    tool: string;
    created_at: number;
    status: string;
    idempotency_key: string | null;
  };
  type CallRow = { idempotency_key: string; server: string; tool: string; args: string; created_at: number };
  return {
    record: (entry) => void insert.run({ ...entry, idempotencyKey: entry.idempotencyKey ?? null }),
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
          ...(r.idempotency_key === null ? {} : { idempotencyKey: r.idempotency_key }),
        }));
    },
    forget: (taskId) => void remove.run(taskId),
    beginCall: (call) =>
      void begin.run(call.idempotencyKey, call.server, call.tool, JSON.stringify(call.args), call.createdAt),
    endCall: (key) => void end.run(key),
    pendingCalls(server) {
      return (pending.all() as CallRow[])
        .filter((r) => server === undefined || r.server === server)
        .map((r) => ({
          idempotencyKey: r.idempotency_key,
          server: r.server,
          tool: r.tool,
          args: JSON.parse(r.args) as Record<string, unknown>,
          createdAt: r.created_at,
        }));
    },
    close: () => db.close(),
  };
}
