// Hooks the worker calls as runs start and end, as steps run and as runs wait (metrics, logs, traces); all optional.
import type { RunOutcome, TaskFailure } from './task.js';
import type { OutOfScopeTasks } from './store.js';
import type { TraceContext } from './trace-context.js';

export interface RunInfo {
  id: string;
  tool: string;
  takenOver: boolean;
  /** The trace the task's runs join (NewTask.trace), whichever process runs it; absent: none kept. */
  trace?: TraceContext;
}

/** One attempt of a step: the same object is given to stepStarted and stepEnded. */
export interface StepInfo {
  readonly name: string;
  /** 1-based, counting the failed attempts of earlier runs. */
  readonly attempt: number;
}

/**
 * How a step attempt ended: its value kept, failed for good, failed and to be retried after a backoff, or stopped
 * by the run (a lost lease, a cancel, the store away, a shutdown, a wait requested meanwhile): no failure of the step.
 */
export type StepEnd = 'completed' | 'failed' | 'retrying' | 'stopped';

/**
 * What a run waits for: `sleep` (ctx.sleep, ctx.sleepUntil), `retry` (a step's backoff), `slot` (a full
 * concurrency key of a step), `input` (ctx.waitForInput, the run staying live), or a kind of a later release.
 */
export type WaitKind = 'sleep' | 'retry' | 'slot' | 'input' | 'child' | 'event' | (string & {});

/** One wait of a run: the same object is given to waitStarted and waitEnded. */
export interface WaitInfo {
  readonly kind: WaitKind;
  /** The step or sleep it belongs to, if any. */
  readonly name?: string;
  /** When it ends (a sleep, a backoff), if known. */
  readonly until?: number;
}

/**
 * How a wait ended for this run: `over` (the run goes on), `parked` (the run ended with the task waiting: a later
 * run, perhaps on another process, goes on), `stopped` (the run stopped during it, or could not keep the wait).
 */
export type WaitEnd = 'over' | 'parked' | 'stopped';

/** An error a tool threw, once it is kept with its task (or, for a call without a task, once it was answered). */
export interface ToolErrorReport {
  taskId: string | undefined;
  tool: string;
  failure: TaskFailure;
}

export interface TaskObserver {
  runStarted?(run: RunInfo): void;
  /**
   * `written` is false when the ending write was refused (lease lost, task already ended) or not made (the lease was
   * lost, or the store unavailable, during the run). Also called, after `runStarted`, for a claim that ends the task
   * without running its tool (a cancel requested before it ran; a crash takeover of a tool that must not re-run).
   */
  runFinished?(run: RunInfo, outcome: RunOutcome['kind'], durationMs: number, written: boolean): void;
  /**
   * A step attempt failed and will be retried (after its backoff): called once the failure is kept, with the step's
   * name and the 1-based number of the attempt that failed.
   */
  stepRetried?(run: RunInfo, step: string, attempt: number): void;
  /** A new attempt of a step starts its body (a recorded step that replays is not run, so not told). */
  stepStarted?(run: RunInfo, step: StepInfo): void;
  /** The attempt ended; `err` is what it threw when it `failed` or is `retrying`. Always after its stepStarted. */
  stepEnded?(run: RunInfo, step: StepInfo, outcome: StepEnd, err?: unknown): void;
  /** The run starts waiting; waitEnded follows, by the time runFinished is called. */
  waitStarted?(run: RunInfo, wait: WaitInfo): void;
  waitEnded?(run: RunInfo, wait: WaitInfo, outcome: WaitEnd): void;
  /** Called once per kept tool error: after the write that ended the task with it. */
  toolError?(report: ToolErrorReport): void;
  error?(err: unknown, taskId?: string): void;
  /**
   * Runnable tasks this process cannot replay (a version its code does not declare), by tool and version, read
   * at most once a minute while there are any (then once more, empty, when there are none left).
   */
  outOfScope?(waiting: readonly OutOfScopeTasks[]): void;
}

/**
 * Calls every observer in turn. The hooks of steps and waits are left out when no observer has them: a run then
 * makes nothing for them (no StepInfo per attempt).
 */
export function combineObservers(...observers: (TaskObserver | undefined)[]): TaskObserver {
  const list = observers.filter((o): o is TaskObserver => o !== undefined);
  const any = (hook: keyof TaskObserver): boolean => list.some((o) => o[hook] !== undefined);
  return {
    runStarted: (run) => list.forEach((o) => o.runStarted?.(run)),
    runFinished: (run, outcome, ms, written) =>
      list.forEach((o) => o.runFinished?.(run, outcome, ms, written)),
    stepRetried: (run, step, attempt) => list.forEach((o) => o.stepRetried?.(run, step, attempt)),
    ...(any('stepStarted') || any('stepEnded')
      ? {
          stepStarted: (run, step) => list.forEach((o) => o.stepStarted?.(run, step)),
          stepEnded: (run, step, outcome, err) => list.forEach((o) => o.stepEnded?.(run, step, outcome, err)),
        }
      : {}),
    ...(any('waitStarted') || any('waitEnded')
      ? {
          waitStarted: (run, wait) => list.forEach((o) => o.waitStarted?.(run, wait)),
          waitEnded: (run, wait, outcome) => list.forEach((o) => o.waitEnded?.(run, wait, outcome)),
        }
      : {}),
    toolError: (report) => list.forEach((o) => o.toolError?.(report)),
    error: (err, id) => list.forEach((o) => o.error?.(err, id)),
    outOfScope: (waiting) => list.forEach((o) => o.outOfScope?.(waiting)),
  };
}
