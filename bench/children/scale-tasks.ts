// Fills a SQLite task store for the stored-task and sleeping-task rows (started by the runner as a child process).
// Usage: scale-tasks.ts SOURCE TARGET COUNT SAMPLE [completed|sleeping]
// SOURCE is a store our server has migrated and in which it has run exactly one task: to completion (`completed`, the
// default), or into a durable sleep (`sleeping`: status working, not runnable, no lease, wake_at set). TARGET becomes
// a copy of it (VACUUM INTO) holding COUNT tasks: the real one and COUNT - 1 clones of its row and of its rows in
// task_steps (every column as the server wrote it, so the same owner, tool, payloads, wake-up time and step memo)
// with new random ids and creation times spread over the last COUNT ms, all expiring a day after creation; completed
// clones are spread over the tools of SCALE_TOOLS in turn (the template's tool first). Rows go in
// in id order, in large transactions, with synchronous=OFF and no journal (a crash would only lose this scratch
// file); the file is switched back to WAL at the end. Prints one JSON line: { count, ms, bytes, sample }, where
// `sample` holds SAMPLE ids picked at random from the whole table (for the requests of the rows).
import { randomBytes, randomInt } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { SCALE_TOOLS } from '../config.js';

/** Rows per transaction. */
const BATCH = 100_000;
/** Time to live of every stored task: far beyond any benchmark run, so no TTL sweep touches them. */
const TTL_MS = 86_400_000;

type Row = Record<string, unknown>;
type Kind = 'completed' | 'sleeping';

const newId = () => `task_${randomBytes(24).toString('base64url')}`;

/** Per kind of template: what its task row must look like (an error message, or undefined). */
const TEMPLATE_CHECKS: Record<Kind, (row: Row) => string | undefined> = {
  completed: (row) => (row.status === 'completed' ? undefined : `status ${String(row.status)}`),
  sleeping: (row) =>
    row.status === 'working' && row.runnable === 0 && row.lease_owner === null && row.wake_at !== null
      ? undefined
      : `status ${String(row.status)}, runnable ${String(row.runnable)}, lease ${String(row.lease_owner)}, ` +
        `wake_at ${String(row.wake_at)}`,
};

/** Reads the template task and its step rows, and copies SOURCE to TARGET. */
function copyTemplate(source: string, target: string, kind: Kind): { template: Row; steps: Row[] } {
  const src = new Database(source, { fileMustExist: true });
  try {
    const rows = src.prepare('SELECT * FROM tasks').all() as Row[];
    const problem = rows.length === 1 ? TEMPLATE_CHECKS[kind](rows[0]!) : `${rows.length} tasks`;
    if (problem !== undefined)
      throw new Error(`${source}: expected exactly one ${kind} task, found ${problem}`);
    // Inputs and failed attempts are not cloned: a template must have none, so that every clone is complete.
    for (const table of ['task_inputs', 'task_step_attempts']) {
      const n = src.prepare(`SELECT count(*) FROM ${table}`).pluck().get();
      if (n !== 0) throw new Error(`${source}: the template task has ${String(n)} rows in ${table}`);
    }
    const steps = src.prepare('SELECT * FROM task_steps WHERE task_id = ?').all(rows[0]!.id) as Row[];
    src.prepare('VACUUM INTO ?').run(target);
    return { template: rows[0]!, steps };
  } finally {
    src.close();
  }
}

/** An INSERT of every column of `row` into `table`, and the positions of the named columns in its values. */
function inserter(db: Database.Database, table: string, row: Row, names: string[]) {
  const columns = Object.keys(row);
  const insert = db.prepare(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  );
  const at = names.map((name) => columns.indexOf(name));
  if (at.includes(-1)) throw new Error(`the ${table} table lacks one of ${names.join(', ')}`);
  return { insert, values: columns.map((c) => row[c]), at };
}

/**
 * Inserts the clones (ids in order, BATCH rows per transaction) and checks that every row is there; with `tools`,
 * the n-th task (the template is the 0th) gets tool `tools[n % tools.length]`.
 */
function insertClones(
  db: Database.Database,
  target: string,
  template: Row,
  steps: Row[],
  ids: string[],
  tools?: readonly string[],
) {
  const count = ids.length + 1;
  const now = Date.now();
  const createdAt = (i: number) => now - (count - i);
  // The clones keep the template's time from creation to its last write.
  const touched = Number(template.updated_at) - Number(template.created_at);
  db.prepare('UPDATE tasks SET ttl_ms = ?, expires_at = ? WHERE id = ?').run(
    TTL_MS,
    createdAt(count - 1) + TTL_MS,
    template.id,
  );
  // One parameter array per table, reused: only the id and the times change from row to row.
  const columns = ['id', 'created_at', 'updated_at', 'ttl_ms', 'expires_at', 'tool'];
  const task = inserter(db, 'tasks', template, columns);
  const [idAt, createdAtAt, updatedAtAt, ttlAt, expiresAt, toolAt] = task.at as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  task.values[ttlAt] = TTL_MS;
  const stepRows = steps.map((step) => inserter(db, 'task_steps', step, ['task_id']));
  const batch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const created = createdAt(i);
      task.values[idAt] = ids[i];
      task.values[createdAtAt] = created;
      task.values[updatedAtAt] = created + touched;
      task.values[expiresAt] = created + TTL_MS;
      if (tools !== undefined) task.values[toolAt] = tools[(i + 1) % tools.length];
      task.insert.run(task.values);
      for (const step of stepRows) {
        step.values[step.at[0]!] = ids[i];
        step.insert.run(step.values);
      }
    }
  });
  for (let from = 0; from < ids.length; from += BATCH) batch(from, Math.min(ids.length, from + BATCH));
  const stored = db.prepare('SELECT count(*) FROM tasks').pluck().get();
  if (stored !== count) throw new Error(`${target}: ${String(stored)} tasks stored, expected ${count}`);
  const stepsStored = db.prepare('SELECT count(*) FROM task_steps').pluck().get();
  if (stepsStored !== count * steps.length) {
    throw new Error(`${target}: ${String(stepsStored)} step rows stored, expected ${count * steps.length}`);
  }
}

function fill(source: string, target: string, count: number, sampleSize: number, kind: Kind) {
  const started = performance.now();
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(target + suffix, { force: true });
  const { template, steps } = copyTemplate(source, target, kind);
  const db = new Database(target, { fileMustExist: true });
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    const ids = Array.from({ length: count - 1 }, newId).sort();
    if (kind === 'completed' && template.tool !== SCALE_TOOLS[0]) {
      throw new Error(
        `${source}: the template task's tool is ${String(template.tool)}, not ${SCALE_TOOLS[0]}`,
      );
    }
    insertClones(db, target, template, steps, ids, kind === 'completed' ? SCALE_TOOLS : undefined);
    db.pragma('journal_mode = WAL');
    ids.push(template.id as string);
    const sample = Array.from({ length: Math.min(sampleSize, ids.length) }, () => ids[randomInt(ids.length)]);
    return { count, ms: Math.round(performance.now() - started), bytes: statSync(target).size, sample };
  } finally {
    db.close();
  }
}

const [source, target, count, sample, kind = 'completed'] = process.argv.slice(2);
try {
  if (!Object.hasOwn(TEMPLATE_CHECKS, kind)) throw new Error(`unknown template kind ${kind}`);
  const filled = fill(source!, target!, Number(count), Number(sample), kind as Kind);
  process.stdout.write(JSON.stringify(filled) + '\n');
} catch (err) {
  process.stderr.write(`scale-tasks: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
