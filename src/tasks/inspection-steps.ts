// The steps of an inspection in the order they ran, one rule for every store: the order steps were done in
// (`task_steps.seq`), steps done before stores recorded it first (by when their result was saved, as far as known).
import type { StepAttempts } from './task.js';
import type { InspectedStep, TaskInspection } from './inspection.js';

/** A step with a result, as a store keeps it: the order it was done in and when it ran, when known. */
export interface DoneStep {
  name: string;
  /** Its place in the order the task's steps were done (null: done before the store recorded that order). */
  seq?: number | null;
  startedAt?: number | null;
  savedAt?: number | null;
}

/** Names in code-unit order (as `COLLATE "C"`): the same on every store and locale. */
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Steps without a place ran before any step with one (the release that records places numbers a task's steps after
 * them): those whose saved time is unknown first (saved before times were kept), then by saved time; then by place.
 */
const rank = (step: DoneStep): number =>
  typeof step.seq === 'number' ? 2 : typeof step.savedAt === 'number' ? 1 : 0;

function runOrder(a: DoneStep, b: DoneStep): number {
  return (
    rank(a) - rank(b) ||
    (a.seq ?? 0) - (b.seq ?? 0) ||
    (a.savedAt ?? 0) - (b.savedAt ?? 0) ||
    byName(a.name, b.name)
  );
}

/** When a step's last attempt failed (steps that never finished follow the done ones in that order). */
const failedAt = (attempts: Record<string, StepAttempts>, name: string): number =>
  attempts[name]?.last.at ?? 0;

/**
 * The steps of an inspection: those with a result in the order they ran, then those with failed attempts only (a
 * step being retried, or one that failed for good), by the time of their last failure.
 */
export function inspectionSteps(
  done: readonly DoneStep[],
  attempts: Record<string, StepAttempts>,
): TaskInspection['steps'] {
  const doneNames = new Set(done.map((step) => step.name));
  const unfinished = Object.keys(attempts)
    .filter((name) => !doneNames.has(name))
    .sort((a, b) => failedAt(attempts, a) - failedAt(attempts, b) || byName(a, b))
    .map((name): DoneStep => ({ name }));
  return [...[...done].sort(runOrder), ...unfinished].map((step) => {
    const timings: Pick<InspectedStep, 'startedAt' | 'savedAt'> = {};
    if (typeof step.startedAt === 'number') timings.startedAt = step.startedAt;
    if (typeof step.savedAt === 'number') timings.savedAt = step.savedAt;
    return {
      name: step.name,
      done: doneNames.has(step.name),
      failedAttempts: attempts[step.name]?.failed ?? 0,
      lastFailure: attempts[step.name]?.last,
      ...timings,
    };
  });
}
