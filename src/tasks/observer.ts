// Hooks the worker calls as runs start and end (metrics, logs, traces); all optional.
import type { RunOutcome } from './task.js';

export interface RunInfo {
  id: string;
  tool: string;
  takenOver: boolean;
}

export interface TaskObserver {
  runStarted?(run: RunInfo): void;
  /** `written` is false when the ending write was refused (lease lost, task already ended). */
  runFinished?(run: RunInfo, outcome: RunOutcome['kind'], durationMs: number, written: boolean): void;
  error?(err: unknown, taskId?: string): void;
}
