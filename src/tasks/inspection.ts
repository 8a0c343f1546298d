// What operators see of a task (TaskStore.inspect): everything kept about it, its steps and its children.
import type { StepFailure, TaskError, TaskFailure, TaskHead, TaskStatus, TaskStatusChange } from './task.js';

/** Everything kept about a task, for operators (never scoped by owner: not for callers). */
export interface TaskInspection extends TaskHead {
  expiresAt: number | null;
  /**
   * The tasks operators' retries made from this one, oldest first, the first 100 (absent from a store that does not
   * list them).
   */
  retries?: string[];
  leaseOwner: string | undefined;
  leaseUntil: number | undefined;
  /** While the task waits (a retry backoff, a sleep): when it runs again. */
  wakeAt: number | undefined;
  cancelRequested: boolean;
  idempotencyKey: string | undefined;
  /** Steps with a result in the order they ran, then those with failed attempts only (inspection-steps.ts). */
  steps: InspectedStep[];
  /**
   * The statuses the task took, oldest first, each with its time and status message (absent from a store that keeps
   * none). Bounded: a store keeps the latest entries; a task stored before the store kept them has those since.
   */
  history?: TaskStatusChange[];
  failure: TaskFailure | undefined;
  error: TaskError | undefined;
  /** Keys of the input requests still waiting for an answer (the operators' detail; absent elsewhere). */
  pendingInputs?: string[];
  /** The W3C trace id of the trace the task's runs join (NewTask.trace; absent: none kept). */
  traceId?: string;
  /** Child tasks (ctx.callTool): the task whose run started this one (absent: none). */
  parentId?: string;
  /** The child tasks its runs started, in creation order, the first 100 (absent: the store does not list them). */
  children?: ChildTaskRef[];
}

/** A child task as its parent lists it (TaskInspection.children, TaskFamily.children). */
export interface ChildTaskRef {
  id: string;
  tool: string;
  status: TaskStatus;
}

/** One step of an inspection. */
export interface InspectedStep {
  name: string;
  done: boolean;
  failedAttempts: number;
  lastFailure: StepFailure | undefined;
  /** When the successful attempt started (ms; absent: unknown, e.g. saved before the store kept it). */
  startedAt?: number;
  /** When the step's result was saved (ms; absent: unknown). */
  savedAt?: number;
}

/** How long a step's successful attempt took, from its start to its saved result (undefined: unknown). */
export const stepDuration = (step: Pick<InspectedStep, 'startedAt' | 'savedAt'>): number | undefined =>
  step.startedAt === undefined || step.savedAt === undefined ? undefined : step.savedAt - step.startedAt;
