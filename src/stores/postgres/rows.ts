// Row types of the PostgreSQL task tables (core/rows.ts maps them to domain types; these add the revision and
// read the aggregates a statement returns).
import type { ClaimedTask, JsonObject, TaskSnapshot } from '../../tasks/task.js';
import type { ChildTaskRef, TaskInspection } from '../../tasks/inspection.js';
import type { HistoryRow } from '../status-history.js';
import type { Opener } from '../payload-sealing.js';
import * as core from '../core/rows.js';

/** bigint columns arrive as strings (pg does not guess at 64-bit precision); epoch ms fit a double. */
type Int8 = string | number;

export interface TaskRow extends core.TaskColumns<Int8, boolean, JsonObject | string> {
  /** Grows with every UPDATE of the row (migration 6). */
  revision: Int8;
  [column: string]: unknown;
}

/** The columns a snapshot is built from, as the statements that commit a change return them (SNAPSHOT_COLUMNS). */
export type SnapshotColumns = core.SnapshotColumns & Pick<TaskRow, 'expires_at' | 'revision'>;

/** `[key, request]` pairs of outstanding inputs, in asking order (json_agg). */
export type OutstandingList = [string, string | null][] | null;

export interface SnapshotRow extends TaskRow {
  outstanding: OutstandingList;
}

/** A task as its owner reads it (getOwned): the snapshot's columns, its parent, and its outstanding inputs. */
export type OwnedRow = SnapshotColumns &
  Pick<TaskRow, 'parent_id' | 'has_children'> & { outstanding: OutstandingList };

/** getOwned's row: OWNED_PACKED (sql/reads.ts), the outstanding requests and has_children in one JSON array; result and error. */
export type PackedOwnedRow = {
  r: unknown[];
  result: string | null;
  error: string | null;
};

/**
 * Unpacks getOwned's row (its integers arrive as JSON numbers: epoch ms and revisions fit a double). An object
 * literal in OWNED_PACKED's order, not a loop over the names: one shape, built at once, on every poll.
 */
export function fromPacked({ r, result, error }: PackedOwnedRow): OwnedRow {
  return {
    id: r[0],
    status: r[1],
    status_message: r[2],
    created_at: r[3],
    updated_at: r[4],
    ttl_ms: r[5],
    poll_interval_ms: r[6],
    expires_at: r[7],
    revision: r[8],
    tool: r[9],
    tool_version: r[10],
    attempt: r[11],
    version_wait: r[12],
    progress: r[13],
    concurrency_key: r[14],
    parked_at: r[15],
    rate_key: r[16],
    rate_reserved_at: r[17],
    wake_at: r[18],
    paused_at: r[19],
    parent_id: r[20],
    outstanding: r[21],
    has_children: r[22],
    result,
    error,
  } as unknown as OwnedRow;
}

export interface ClaimRow extends TaskRow {
  previous_owner: string | null;
  /** The lease the claim replaced (null: none): what a claim parking the task puts back (slots.ts). */
  previous_until: Int8 | null;
  /** `[name, value]` pairs. */
  steps: [string, string][];
  /** `[key, answer]` pairs of every input ever asked or given (answer null while open). */
  inputs: [string, string | null][];
  attempts: AttemptList;
}

export type AttemptList = [string, number, string][];

export interface InspectRow extends TaskRow {
  /** `[name, started_at, saved_at, seq]` of task_steps. */
  done_steps: [string, number | null, number | null, number | null][];
  attempts: AttemptList;
  history: HistoryRow[];
  /** Ids of the tasks retries made from this one, oldest first. */
  retries: string[];
  /** Its child tasks, first ones in creation order. */
  children: ChildTaskRef[];
}

export const toNumber = (v: Int8): number => (typeof v === 'number' ? v : Number(v));
export const toNumberOrNull = (v: Int8 | null): number | null => (v === null ? null : toNumber(v));

/** `open` decrypts sealed payloads (identity when the store has no cipher). */
export function toSnapshot(
  row: SnapshotColumns & { outstanding?: OutstandingList },
  open: Opener,
): TaskSnapshot {
  return { ...core.toSnapshot(row, row.outstanding ?? [], open), revision: toNumber(row.revision) };
}

export function toClaimedTask(row: ClaimRow, open: Opener): ClaimedTask {
  const start = {
    takenOver: row.previous_owner !== null,
    steps: row.steps,
    inputs: row.inputs,
    attempts: row.attempts,
  };
  return core.toClaimedTask(row, start, open);
}

/** Everything kept about a task, for operators. */
export function toInspection(row: InspectRow, open: Opener): TaskInspection {
  const done = row.done_steps.map(([name, startedAt, savedAt, seq]) => ({ name, startedAt, savedAt, seq }));
  return core.toInspection(
    row,
    { done, attempts: row.attempts, history: row.history, retries: row.retries, children: row.children },
    open,
  );
}
