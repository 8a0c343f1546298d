// The byte quota of an owner's kept tasks, as both stores apply it. What counts: the arguments, result, step values,
// input requests and answers of each task, as stored (a sealed value counts sealed), until the task is purged. Each
// store keeps the count per owner with triggers, in the transaction of every write that changes it, whatever wrote
// it (SQLite migration 18, PostgreSQL migration 17); the quota reads that count, never the tasks.
import { ActiveLimitError } from '../tasks/errors.js';
import type { EncodedTask } from './encode-task.js';

/** UTF-8 bytes of stored payload texts (null: none). */
export function storedBytes(...texts: (string | null)[]): number {
  let n = 0;
  for (const text of texts) if (text !== null) n += Buffer.byteLength(text, 'utf8');
  return n;
}

/** The bytes a new task stores at creation: its arguments and the answers gathered before it. */
export const creationBytes = (task: EncodedTask): number =>
  storedBytes(task.args, ...task.answers.map(([, answer]) => answer));

/** The refusal of a write of `adding` bytes by an owner that stores `held`, when it would pass `limit`. */
export function overStoredBytes(
  held: number,
  adding: number,
  limit: number | null | undefined,
): ActiveLimitError | undefined {
  return limit !== null && limit !== undefined && held + adding > limit
    ? new ActiveLimitError(limit, 'stored-bytes')
    : undefined;
}
