// What a task's owner is shown of its progress, read from its row alike on both stores: the status message kept
// (or, while the task waits for a server running its version, the message saying so) and the progress shown last.
import {
  rateWaitMessage,
  slotWaitMessage,
  versionWaitMessage,
  type TaskProgress,
  type TaskStatus,
} from '../tasks/task.js';
import { PAUSED_MESSAGE } from '../tasks/pauses.js';
import { openColumn, openStatus, sealedAt, type Opener } from './payload-sealing.js';

/** The columns it is read from (SQLite: numbers; PostgreSQL: integers as numbers). */
export interface ShownColumns {
  id: string;
  status: TaskStatus;
  status_message: string | null;
  tool: string;
  tool_version: string | null;
  attempt: number;
  /** Migration 16 (SQLite), 15 (PostgreSQL): absent from rows of statements that do not read it. */
  version_wait?: number | null;
  progress?: string | null;
  /** SQLite migration 20, PostgreSQL migration 19: parked for a slot of its concurrency key (slots). */
  concurrency_key?: string | null;
  parked_at?: number | string | null;
  /** Migration 25 (both): waiting for the start a claim reserved under the rate limit of its key (rate-limits.ts). */
  rate_key?: string | null;
  rate_reserved_at?: number | string | null;
  wake_at?: number | string | null;
  /** Migration 24 (both stores): held back by an operator's pause (pauses). */
  paused_at?: number | string | null;
}

/**
 * Whether the task waits for the start a claim reserved for it under its rate limit: it has never run, a claim
 * reserved its start, and it waits (a debounced task waits for its window before any claim reserves a start).
 */
export const waitsForRate = (row: ShownColumns): boolean =>
  row.status === 'working' &&
  row.attempt === 0 &&
  row.rate_key != null &&
  row.rate_reserved_at != null &&
  row.wake_at != null;

/**
 * Whether the task waits for a server running its version: a process that cannot run it marked it at its current
 * attempt (markVersionWaits), and no run has claimed it since (every claim moves the attempt on, whichever release
 * of the code made it), and it is still working.
 */
export const waitsForVersion = (row: ShownColumns): boolean =>
  row.status === 'working' &&
  row.tool_version !== null &&
  row.version_wait !== undefined &&
  row.version_wait !== null &&
  Number(row.version_wait) === row.attempt;

/** The status message the owner sees. */
export function shownStatus(row: ShownColumns, open: Opener): string | undefined {
  if (waitsForVersion(row)) return versionWaitMessage(row.tool, row.tool_version as string);
  if (row.status === 'working' && row.paused_at != null) return PAUSED_MESSAGE;
  if (row.status === 'working' && row.parked_at != null && row.concurrency_key != null)
    return slotWaitMessage(row.concurrency_key);
  if (waitsForRate(row)) return rateWaitMessage(row.rate_key as string);
  return openStatus(row.id, row.status_message, open);
}

/** The progress shown last, as kept (undefined: none yet). */
export const shownProgress = (row: ShownColumns, open: Opener): TaskProgress | undefined =>
  openColumn<TaskProgress>(row.progress ?? null, 'tasks.progress', row.id, open);

/** `progress` as the progress column keeps it: JSON, sealed when the task's payloads are. */
export const keptProgress = (
  seal: (json: string, at: string) => string,
  id: string,
  progress: TaskProgress | undefined,
): string | null =>
  progress === undefined ? null : seal(JSON.stringify(progress), sealedAt('tasks.progress', id));
