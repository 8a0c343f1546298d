// The word a failed task's error gives as `data.outcome` (the gateway's `unknown`, `not_sent`, …), kept beside the
// error in a column of its own: the error may be sealed, and operators search by it (AdminTaskFilter.errorOutcome).
import type { TaskError } from './task.js';

/** A word: a lower-case letter, then at most 31 lower-case letters, digits or `_`. Anything else is not kept. */
export const ERROR_OUTCOME_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;

/** The error's `data.outcome` when it is such a word; null otherwise (no data, another type, free text). */
export function errorOutcomeOf(error: TaskError | undefined): string | null {
  const data = error?.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const outcome = (data as Record<string, unknown>).outcome;
  return typeof outcome === 'string' && ERROR_OUTCOME_PATTERN.test(outcome) ? outcome : null;
}
