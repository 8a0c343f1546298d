// Task priorities (TaskPolicy.priority, the caller's where the server allows it): what a valid priority is, and the
// one a new task takes.
import { PRIORITY_RANGE } from './task.js';

/** Why a priority is refused, or undefined when it is valid: a whole number in PRIORITY_RANGE. */
export function priorityProblem(value: unknown): string | undefined {
  const { min, max } = PRIORITY_RANGE;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max)
    return undefined;
  return `must be a whole number from ${min} to ${max}`;
}

/**
 * The priority a task of `tool` takes: the caller's when given (and allowed: the caller checked it), else the policy's
 * (a function is called with the call's arguments and caller). Throws when a computed priority is not valid.
 */
export function priorityOf<A, O>(
  tool: string,
  policy: number | ((args: A, owner: O) => number) | undefined,
  call: { args: A; owner: O },
  caller?: number,
): number | undefined {
  if (caller !== undefined) return caller;
  if (typeof policy !== 'function') return policy;
  const value: unknown = policy(call.args, call.owner);
  const problem = priorityProblem(value);
  if (problem !== undefined)
    throw new Error(`tool "${tool}": task.priority: the computed priority ${problem}`);
  return value as number;
}
