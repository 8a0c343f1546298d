// Reads the store of a crash section (a SQLite file or a PostgreSQL schema) for the checks.
import Database from 'better-sqlite3';
import { pgQuery, pgTable } from '../harness/postgres.js';
import type { StoreSnapshot, TaskRow } from './types.js';

/** Where a section's store lives. */
export type StoreLocation =
  { backend: 'sqlite'; file: string } | { backend: 'postgres'; url: string; schema: string };

const TASK_COLUMNS = 'id, tool, args, status, result, error, attempt';

export async function readStore(at: StoreLocation): Promise<StoreSnapshot> {
  if (at.backend === 'sqlite') {
    const db = new Database(at.file, { fileMustExist: true });
    try {
      return {
        tasks: db
          .prepare(`SELECT ${TASK_COLUMNS}, created_at, updated_at, expires_at, idempotency_key FROM tasks`)
          .all() as TaskRow[],
        steps: db.prepare('SELECT task_id, name, value FROM task_steps').all() as StoreSnapshot['steps'],
        inputs: db.prepare('SELECT task_id, key, answer, superseded FROM task_inputs').all(),
        attempts: db
          .prepare('SELECT task_id, name, failed, last_failure FROM task_step_attempts')
          .all() as StoreSnapshot['attempts'],
      };
    } finally {
      db.close();
    }
  }
  const t = (table: string): string => pgTable(at.schema, table);
  const [tasks, steps, inputs, attempts] = await Promise.all([
    pgQuery<TaskRow>(
      at.url,
      `SELECT ${TASK_COLUMNS}, created_at::float8 AS created_at,
         updated_at::float8 AS updated_at, expires_at::float8 AS expires_at, idempotency_key FROM ${t('tasks')}`,
    ),
    pgQuery<StoreSnapshot['steps'][number]>(at.url, `SELECT task_id, name, value FROM ${t('task_steps')}`),
    pgQuery(at.url, `SELECT task_id, key, answer, superseded FROM ${t('task_inputs')}`),
    pgQuery<NonNullable<StoreSnapshot['attempts']>[number]>(
      at.url,
      `SELECT task_id, name, failed, last_failure FROM ${t('task_step_attempts')}`,
    ),
  ]);
  return { tasks, steps, inputs, attempts };
}

/** The tasks of the store as they are now (while processes write to it). */
export async function currentTasks(at: StoreLocation): Promise<Pick<TaskRow, 'id' | 'tool' | 'args'>[]> {
  if (at.backend === 'sqlite') {
    const db = new Database(at.file, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      return db.prepare('SELECT id, tool, args FROM tasks').all() as Pick<TaskRow, 'id' | 'tool' | 'args'>[];
    } finally {
      db.close();
    }
  }
  return pgQuery(at.url, `SELECT id, tool, args FROM ${pgTable(at.schema, 'tasks')}`);
}
