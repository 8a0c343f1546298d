// The bounds on what one task may store: how many steps it records, how large a step's value may be, and how large
// its result, an input request or a status message may be. Each is checked where the handler produces the thing,
// and what passes a bound is never stored: a value that is too big stays too big, so the error is not retried.
import { NonRetryableError } from './retry.js';

export interface TaskLimits {
  /** Steps, sleeps and ctx.patched decisions one task may record (each run replays them all). */
  maxStepsPerTask: number;
  /** The largest step value, as UTF-8 bytes of its JSON text. */
  maxStepBytes: number;
  /** The largest result, input request or status message, as UTF-8 bytes of its JSON (or plain) text. */
  maxResultBytes: number;
  /** Chunks one task may append to its streams (ctx.stream), all streams together. */
  maxStreamChunksPerTask: number;
  /** UTF-8 bytes of chunk text one task may append to its streams, all streams together. */
  maxStreamBytesPerTask: number;
}

const MIB = 1024 * 1024;

/**
 * 10 000 records: a claim loads every recorded step and each run walks them, so the work of a task grows with the
 * square of its history (Temporal warns at 10 240 events for the same reason); 4 MiB: the default request body limit.
 */
export const DEFAULT_TASK_LIMITS: Readonly<TaskLimits> = {
  maxStepsPerTask: 10_000,
  maxStepBytes: 4 * MIB,
  maxResultBytes: 4 * MIB,
  maxStreamChunksPerTask: 10_000,
  maxStreamBytesPerTask: 16 * MIB,
};

/**
 * The default byte quota of a principal's kept tasks (TasksExtensionOptions and WorkerOptions
 * maxStoredBytesPerPrincipal): 1 GiB, room for 10 000 kept tasks of 100 KiB each.
 */
export const DEFAULT_MAX_STORED_BYTES_PER_PRINCIPAL = 1024 * MIB;

/** The byte quota a maxStoredBytesPerPrincipal option sets: the default when not given, none for 0. */
export function storedBytesLimitOf(option: number | undefined): number | undefined {
  const max = option ?? DEFAULT_MAX_STORED_BYTES_PER_PRINCIPAL;
  if (!Number.isSafeInteger(max) || max < 0)
    throw new TypeError('maxStoredBytesPerPrincipal must be a whole number of at least 0');
  return max === 0 ? undefined : max;
}

/** A bound on what one task, or all the kept tasks of one principal, may store. */
export type TaskBound = keyof TaskLimits | 'maxStoredBytesPerPrincipal';

/** The flag (and option) that sets each bound, named in the errors. */
const FLAGS: Readonly<Record<TaskBound, string>> = {
  maxStepsPerTask: 'max-steps-per-task',
  maxStepBytes: 'max-step-bytes',
  maxResultBytes: 'max-result-bytes',
  maxStreamChunksPerTask: 'max-stream-chunks-per-task',
  maxStreamBytesPerTask: 'max-stream-bytes-per-task',
  maxStoredBytesPerPrincipal: 'max-stored-bytes-per-principal',
};

/** Limits given in part, checked, over the defaults; a message naming the field when one is not a whole number ≥ 1. */
export function resolveTaskLimits(given: Partial<TaskLimits> = {}): TaskLimits {
  const out = { ...DEFAULT_TASK_LIMITS };
  for (const key of Object.keys(DEFAULT_TASK_LIMITS) as (keyof TaskLimits)[]) {
    const value = given[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new TypeError(`limits.${key} must be a whole number of at least 1`);
    out[key] = value;
  }
  return out;
}

/** A task passed one of its bounds; never retried (what is too big stays too big). */
export class TaskLimitError extends NonRetryableError {
  constructor(
    message: string,
    readonly limit: TaskBound,
    readonly max: number,
  ) {
    super(`${message} (${FLAGS[limit]}: ${max})`);
    this.name = 'TaskLimitError';
  }
}

/** The UTF-8 bytes of `text` when they are more than `max`, else undefined (not counted when surely fewer). */
export function bytesOver(text: string, max: number): number | undefined {
  // A UTF-16 unit is at most 3 bytes of UTF-8.
  if (text.length * 3 <= max) return undefined;
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes > max ? bytes : undefined;
}

/** Throws a TaskLimitError when `text` (what `what` names) is over the limit. */
export function checkTextSize(what: string, text: string, limit: keyof TaskLimits, max: number): void {
  const bytes = bytesOver(text, max);
  if (bytes !== undefined) throw new TaskLimitError(`${what} is ${bytes} bytes, over the limit`, limit, max);
}

/** Throws a TaskLimitError when the JSON text of `value` (what `what` names) is over the limit. */
export function checkJsonSize(what: string, value: unknown, limit: keyof TaskLimits, max: number): void {
  checkTextSize(what, JSON.stringify(value) ?? '', limit, max);
}

/** The error for a step, sleep or patch decision whose value would put its principal over the byte quota. */
export function overStoredBytesQuota(what: string, max: number): TaskLimitError {
  return new TaskLimitError(
    `${what} was refused: its value would put the tasks this principal keeps over their limit of bytes, until ` +
      `some are purged`,
    'maxStoredBytesPerPrincipal',
    max,
  );
}

/** The error for a step, sleep or patch decision past maxStepsPerTask: nothing more is recorded. */
export function tooManySteps(what: string, max: number): TaskLimitError {
  return new TaskLimitError(
    `${what} was refused: this task has recorded ${max} steps, sleeps and patch decisions, the most one ` +
      `task may keep; do more in each step, or start a new task for further rounds`,
    'maxStepsPerTask',
    max,
  );
}

/** The error for a ctx.map whose items would take its task past maxStepsPerTask: refused before any item runs. */
export function tooManyMapItems(what: string, items: number, room: number, max: number): TaskLimitError {
  return new TaskLimitError(
    `${what} was refused before any item ran: its ${items} items need a step each, and this task has room for ` +
      `${Math.max(0, room)} more; map fewer items, or several in each step`,
    'maxStepsPerTask',
    max,
  );
}

/** The error for a chunk a task's streams cannot take: nothing more is appended. */
export function streamFull(stream: string, bound: 'chunks' | 'bytes', limits: TaskLimits): TaskLimitError {
  return bound === 'chunks'
    ? new TaskLimitError(
        `stream "${stream}": append refused, this task's streams hold ${limits.maxStreamChunksPerTask} chunks, ` +
          `the most one task may keep; append larger chunks, or fewer`,
        'maxStreamChunksPerTask',
        limits.maxStreamChunksPerTask,
      )
    : new TaskLimitError(
        `stream "${stream}": append refused, it would put the text of this task's streams over ` +
          `${limits.maxStreamBytesPerTask} bytes, the most one task may keep`,
        'maxStreamBytesPerTask',
        limits.maxStreamBytesPerTask,
      );
}
