// The client journal on a SQLite file: task ids, where they live and their last known status, and the calls whose
// answers have not arrived yet. The file's schema version is PRAGMA user_version; migrations only go forward.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { sqliteDriver } from './driver.js';

const TERMINAL = ['completed', 'failed', 'cancelled'];

/** Structurally the client's Journal port (stores do not import the client). */
export interface JournalRecord {
  taskId: string;
  server: string;
  tool: string;
  createdAt: number;
  status: string;
  idempotencyKey?: string;
  label?: string;
  args?: Record<string, unknown>;
}

export interface PendingCallRecord {
  idempotencyKey: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  createdAt: number;
  label?: string;
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

/**
 * Version 1: the journal of tasks (as first released). Version 2: pending calls and the key of each task. Version 3:
 * the app's label of each call and task, and the arguments of each task while it is unfinished.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS journal (
    task_id TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL
  ) STRICT`,
  `ALTER TABLE journal ADD COLUMN idempotency_key TEXT;
   CREATE TABLE calls (
    idempotency_key TEXT PRIMARY KEY, server TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT`,
  `ALTER TABLE journal ADD COLUMN label TEXT;
   ALTER TABLE journal ADD COLUMN args TEXT;
   ALTER TABLE calls ADD COLUMN label TEXT`,
];

/** A task's arguments are dropped once it ends: the journal keeps them only to tell the app what is still running. */
const TERMINAL_SQL = `(${TERMINAL.map((s) => `'${s}'`).join(', ')})`;

function migrate(db: Database.Database): void {
  const apply = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    // A file of the first release has the journal table and user_version 0: its CREATE is a no-op.
    for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v] as string);
    if (version < MIGRATIONS.length) db.pragma(`user_version = ${MIGRATIONS.length}`);
  });
  apply.immediate();
}

type Row = {
  task_id: string;
  server: string;
  tool: string;
  created_at: number;
  status: string;
  idempotency_key: string | null;
  label: string | null;
  args: string | null;
};
type CallRow = {
  idempotency_key: string;
  server: string;
  tool: string;
  args: string;
  created_at: number;
  label: string | null;
};

const toRecord = (r: Row): JournalRecord => ({
  taskId: r.task_id,
  server: r.server,
  tool: r.tool,
  createdAt: r.created_at,
  status: r.status,
  ...(r.idempotency_key === null ? {} : { idempotencyKey: r.idempotency_key }),
  ...(r.label === null ? {} : { label: r.label }),
  ...(r.args === null ? {} : { args: JSON.parse(r.args) as Record<string, unknown> }),
});

const toCall = (r: CallRow): PendingCallRecord => ({
  idempotencyKey: r.idempotency_key,
  server: r.server,
  tool: r.tool,
  args: JSON.parse(r.args) as Record<string, unknown>,
  createdAt: r.created_at,
  ...(r.label === null ? {} : { label: r.label }),
});

/** The journal's statements. A record of a task already there (a call sent again) keeps its label and arguments. */
function statements(db: Database.Database) {
  return {
    insert: db.prepare(
      `INSERT INTO journal (task_id, server, tool, created_at, status, idempotency_key, label, args)
       VALUES (@taskId, @server, @tool, @createdAt, @status, @idempotencyKey, @label,
         CASE WHEN @status IN ${TERMINAL_SQL} THEN NULL ELSE @args END)
       ON CONFLICT (task_id) DO UPDATE SET status = excluded.status,
         label = COALESCE(journal.label, excluded.label),
         args = CASE WHEN excluded.status IN ${TERMINAL_SQL} THEN NULL ELSE COALESCE(journal.args, excluded.args) END`,
    ),
    update: db.prepare(
      `UPDATE journal SET status = @status, args = CASE WHEN @status IN ${TERMINAL_SQL} THEN NULL ELSE args END
       WHERE task_id = @taskId`,
    ),
    all: db.prepare(
      `SELECT task_id, server, tool, created_at, status, idempotency_key, label, args FROM journal
       ORDER BY created_at`,
    ),
    remove: db.prepare(`DELETE FROM journal WHERE task_id = ?`),
    begin: db.prepare(
      `INSERT OR REPLACE INTO calls (idempotency_key, server, tool, args, created_at, label)
       VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    end: db.prepare(`DELETE FROM calls WHERE idempotency_key = ?`),
    pending: db.prepare(
      `SELECT idempotency_key, server, tool, args, created_at, label FROM calls ORDER BY created_at`,
    ),
  };
}

export function createSqliteJournal(path: string): SqliteJournal {
  const Driver = sqliteDriver('the SQLite client journal');
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Driver(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  const sql = statements(db);
  const ofServer = (server: string | undefined) => (r: { server: string }) =>
    server === undefined || r.server === server;
  return {
    record: (entry) =>
      void sql.insert.run({
        ...entry,
        idempotencyKey: entry.idempotencyKey ?? null,
        label: entry.label ?? null,
        args: entry.args === undefined ? null : JSON.stringify(entry.args),
      }),
    update: (taskId, status) => void sql.update.run({ status, taskId }),
    unfinished: (server) =>
      (sql.all.all() as Row[])
        .filter((r) => !TERMINAL.includes(r.status) && ofServer(server)(r))
        .map(toRecord),
    forget: (taskId) => void sql.remove.run(taskId),
    beginCall: (call) =>
      void sql.begin.run(
        call.idempotencyKey,
        call.server,
        call.tool,
        JSON.stringify(call.args),
        call.createdAt,
        call.label ?? null,
      ),
    endCall: (key) => void sql.end.run(key),
    pendingCalls: (server) => (sql.pending.all() as CallRow[]).filter(ofServer(server)).map(toCall),
    close: () => db.close(),
  };
}
