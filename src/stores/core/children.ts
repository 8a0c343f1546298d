// Child tasks (ctx.callTool) as both stores keep them: the bound on the children shown with a task.
import type { RunOutcome } from '../../tasks/task.js';

/** At most this many children are shown with a task (its first ones): TaskFamily.children. */
export const MAX_FAMILY_CHILDREN = 100;

/** Whether a run's outcome ends its task (then a parent waiting on it wakes). */
export const isTerminalOutcome = (outcome: RunOutcome): boolean =>
  outcome.kind === 'completed' || outcome.kind === 'failed' || outcome.kind === 'cancelled';
