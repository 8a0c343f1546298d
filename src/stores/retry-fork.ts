// An operator's retry as both stores make it: which tasks may be retried, and the new task's payloads, copied from the
// task retried. Sealed values are bound to their row (sealedAt), so each is opened and sealed again for the new one.
import type { AdminRecordedStep, AdminRetryResult } from '../tasks/admin.js';
import { newTaskId } from '../tasks/ids.js';
import { outcomeOf, type JsonObject, type TaskOwner, type TaskStatus } from '../tasks/task.js';
import { openCaps, sealCaps, sealedAt, sealStatus, type PayloadSealing } from './payload-sealing.js';

/** Only a task that ended failed or in a tool error is retried. */
const isRetryable = (status: TaskStatus, toolError: boolean): boolean => {
  const outcome = outcomeOf(status, toolError);
  return outcome === 'failed' || outcome === 'tool_error';
};

/** A retry of the task `source` (which ended as `state` says): the new task's rows, or why there is none. */
export function planRetry(
  source: ForkSource,
  state: Pick<ForkState, 'status' | 'toolError'>,
  sealing: PayloadSealing,
  record?: RecordedStep,
): { ok: true; fork: ForkRows } | Extract<AdminRetryResult, { ok: false }> {
  if (!isRetryable(state.status, state.toolError)) return { ok: false, reason: 'not_failed' };
  if (record !== undefined && source.steps.some((step) => step.name === record.step))
    return { ok: false, reason: 'step_kept' };
  try {
    const fork = forkRows(source, sealing);
    if (record !== undefined) fork.steps.push(recordedRow(fork, record, sealing));
    return { ok: true, fork };
  } catch (err) {
    if (err instanceof SealedPayloadError) return { ok: false, reason: 'sealed' };
    throw err;
  }
}

/** A step's value an operator verified (AdminRecordedStep), and when it was recorded. */
export interface RecordedStep extends AdminRecordedStep {
  at: number;
}

/** The recorded step as the new task keeps it: sealed like its other steps, done after them. */
function recordedRow(fork: ForkRows, record: RecordedStep, sealing: PayloadSealing): ForkStep {
  const last = Math.max(0, ...fork.steps.map((step) => step.seq ?? 0));
  return {
    name: record.step,
    value: sealing.sealFor(
      fork.sealed,
      JSON.stringify(record.value),
      sealedAt('task_steps.value', fork.id, record.step),
    ),
    seq: last + 1,
    startedAt: null,
    savedAt: record.at,
  };
}

/** The status message a retry's new task starts with (its owner reads it; the task retried is theirs too). */
export const retryMessage = (retried: string): string =>
  `An operator retried task ${retried}: it runs again from its last finished step.`;

/** A finished step as kept (task_steps), in the order done. */
export interface ForkStep {
  name: string;
  value: string;
  seq: number | null;
  startedAt: number | null;
  savedAt: number | null;
}

/** An answered input as kept (task_inputs). */
export interface ForkInput {
  key: string;
  request: string | null;
  answer: string;
  askedAt: number;
  answeredAt: number | null;
}

/** What is copied of the task retried, as its row keeps it. */
export interface ForkSource {
  id: string;
  sealed: boolean;
  args: string;
  /** The client_caps column as read (JSON text on SQLite, its value on PostgreSQL). */
  caps: JsonObject | string;
  steps: ForkStep[];
  inputs: ForkInput[];
}

/** What decides whether a task may be retried, and by whom: its owner (the tenant scope) and how it ended. */
export interface ForkState {
  owner: TaskOwner;
  status: TaskStatus;
  toolError: boolean;
}

/** The new task's id and its payload columns, sealed (or not) for it. */
export interface ForkRows {
  id: string;
  sealed: boolean;
  args: string;
  caps: string;
  statusMessage: string;
  steps: ForkStep[];
  inputs: ForkInput[];
}

/** The task's payloads are sealed with a key the store does not hold: they cannot be copied. */
export class SealedPayloadError extends Error {
  constructor(id: string) {
    super(`the payloads of task ${id} are sealed with a key this store does not hold`);
    this.name = 'SealedPayloadError';
  }
}

/**
 * The new task's rows: a new id, and every payload opened from its place in the task retried and sealed at its place
 * in the new one. The new task is sealed if the old one was, or if the store now seals every task. Throws
 * SealedPayloadError when a payload cannot be opened.
 */
export function forkRows(source: ForkSource, sealing: PayloadSealing): ForkRows {
  if (source.sealed && !sealing.enabled) throw new SealedPayloadError(source.id);
  const id = newTaskId();
  const sealed = sealing.enabled && (sealing.sealsAll || source.sealed);
  const move = (stored: string, column: string, name?: string): string => {
    let json: string;
    try {
      json = sealing.open(stored, sealedAt(column, source.id, name));
    } catch {
      throw new SealedPayloadError(source.id);
    }
    return sealing.sealFor(sealed, json, sealedAt(column, id, name));
  };
  let caps: JsonObject;
  try {
    caps = openCaps(source.id, source.caps, sealing.open);
  } catch {
    throw new SealedPayloadError(source.id);
  }
  return {
    id,
    sealed,
    args: move(source.args, 'tasks.args'),
    caps: sealCaps(sealing, sealed, id, caps),
    statusMessage: sealStatus(sealing, sealed, id, retryMessage(source.id)),
    steps: source.steps.map((step) => ({ ...step, value: move(step.value, 'task_steps.value', step.name) })),
    inputs: source.inputs.map((input) => ({
      ...input,
      request: input.request === null ? null : move(input.request, 'task_inputs.request', input.key),
      answer: move(input.answer, 'task_inputs.answer', input.key),
    })),
  };
}
