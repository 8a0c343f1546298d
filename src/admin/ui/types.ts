// The JSON the operator API answers (src/admin/shapes.ts, docs/operations.md "Operator API"), under the names the
// dashboard uses, and what it derives from them.
import type {
  HealthJson,
  OverviewJson,
  SessionJson,
  TaskDetailJson,
  TaskEventJson,
  TaskOutcomeJson,
  TaskPageJson,
  TaskRowJson,
  TaskStatusJson,
} from '../shapes.js';

export type TaskStatus = TaskStatusJson;
export type TaskOutcome = TaskOutcomeJson;
export type Session = SessionJson;
export type TaskRow = TaskRowJson;
export type TaskPage = TaskPageJson;
export type TaskDetail = TaskDetailJson;
export type Overview = OverviewJson;
export type Health = HealthJson;
/** One message of GET /admin/api/v1/events. */
export type TaskEvent = TaskEventJson;

export const STATUSES: readonly TaskStatus[] = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
];
export const OUTCOMES: readonly TaskOutcome[] = ['completed', 'tool_error', 'failed', 'cancelled'];
export const isTerminal = (s: TaskStatus): boolean =>
  s === 'completed' || s === 'failed' || s === 'cancelled';
/** Whether an operator may retry the task (as a new task): it failed, or ended in a tool error. */
export const isRetryable = (t: Pick<TaskRow, 'outcome'>): boolean =>
  t.outcome === 'failed' || t.outcome === 'tool_error';
/** A gateway task whose call the upstream may or may not have done (its error's data says `outcome: "unknown"`). */
export const isOutcomeUnknown = (t: Pick<TaskRow, 'error'>): boolean => t.error?.outcome === 'unknown';
