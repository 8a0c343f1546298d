// The legacy waits (tasks/result, tasks/cancel) watch one task for the request's lifetime.
import { watchDelay, watchTask, type TaskWatch } from '../protocol/tasks/task-watch.js';
import type { LegacyCall } from './call.js';

export type TaskWaiter = TaskWatch;

export const waitForTask = (call: LegacyCall, taskId: string): TaskWaiter =>
  watchTask(call.ctx.store, taskId, call.signal);

export const pollDelay = (call: LegacyCall, pollIntervalMs: unknown): number =>
  watchDelay(call.ctx.store, pollIntervalMs);
