// The testing kit's replay of a recorded history against the kit's tools (durable-mcp/testing): recorded steps return
// their values, and the replay stops where the history ends, so no step body ever runs.
import {
  isControlFlow,
  WaitPending,
  type ControlFlow,
  CHILD_PREFIX,
  type ExecutionContext,
  type NonDeterminismError,
  type StepOptions,
  type TaskRunner,
} from './tasks/execution.js';
import type { ManualClock } from './tasks/manual-clock.js';
import type { TaskStore } from './tasks/store.js';
import type { ClaimedTask, JsonObject, JsonValue, TaskOwner } from './tasks/task.js';
import { createEventWait } from './worker/event-waits.js';
import { createSteps, PATCH_PREFIX, type RunState } from './worker/steps.js';

/** Everything a task recorded that a replay reads: its tool and arguments, its steps in order, its answers. */
export interface TaskHistory {
  tool: string;
  toolVersion?: string;
  args: JsonObject;
  steps: [name: string, value: JsonValue][];
  answers: Record<string, JsonObject>;
}

/** How a replay of a recorded history against the kit's tools went. */
export type ReplayReport =
  | {
      ok: true;
      /** Where the replay stopped: the handler ended, asked for input or waited, or reached a step the history lacks. */
      reached: 'end' | 'input' | 'wait' | 'new-step';
      /** The first new step or sleep, when `reached` is `new-step`. */
      step?: string;
    }
  | { ok: false; error: string; expected: string; actual: string };

/** The owner of the kit's tasks. */
export const KIT_OWNER: TaskOwner = { tenant: 'test', principal: 'tester' };

/** A child the history has is its kept outcome; one it lacks ends the replay there, before anything starts. */
const recordedChildren =
  (
    task: ClaimedTask,
    child: ExecutionContext['child'],
    stop: (step: string) => never,
  ): ExecutionContext['child'] =>
  async (name, start) =>
    Object.hasOwn(task.steps, `${CHILD_PREFIX}${name}`) ? child(name, start) : stop(`${CHILD_PREFIX}${name}`);

/** Stops a replay where the recorded history ends: a new step's body never runs. */
class ReplayReachedNew extends Error implements ControlFlow {
  readonly controlFlow = true;
  constructor(readonly step: string) {
    super(`the replay reached "${step}", which the history does not have`);
  }
}

/**
 * A store that writes nothing: reaching anything the history does not have ends the replay there (`stop`). A
 * ctx.patched decision is no side effect: it is made as in a run, and the replay goes on. A wait for an event the
 * history lacks is new too.
 */
function noWrites(stop: (name: string) => never): TaskStore {
  return new Proxy({} as TaskStore, {
    get: (_t, prop) =>
      prop === 'saveStep'
        ? async (_id: string, _tok: number, name: string) => name.startsWith(PATCH_PREFIX) || stop(name)
        : prop === 'events'
          ? { wait: async (_id: string, _tok: number, name: string) => stop(name) }
          : undefined,
  });
}

/** Replays `history` with the kit's tools: recorded steps return their values, a new one ends the replay. */
export async function replayHistory(
  runner: TaskRunner,
  clock: ManualClock,
  caps: JsonObject,
  history: TaskHistory,
): Promise<ReplayReport> {
  const task: ClaimedTask = {
    id: 'replay',
    owner: KIT_OWNER,
    tool: history.tool,
    toolVersion: history.toolVersion,
    args: history.args,
    token: 1,
    takenOver: false,
    replayAfterCrash: true,
    cancelRequested: false,
    clientCapabilities: caps,
    steps: Object.fromEntries(history.steps),
    stepOrder: history.steps.map(([name]) => name),
    stepAttempts: {},
    answers: history.answers,
    askedKeys: Object.keys(history.answers),
  };
  let reached: ReplayReachedNew | undefined;
  const stop = (step: string): never => {
    reached ??= new ReplayReachedNew(step);
    throw reached;
  };
  let wait: { until: number; statusMessage: string } | undefined;
  let diverged: NonDeterminismError | undefined;
  const signal = new AbortController().signal;
  const run: RunState = {
    signal,
    leaseLost: () => false,
    storeError: () => undefined,
    onLeaseLost: () => undefined,
    onWriteError: (err) => err,
    requestWait: (until, statusMessage) => (wait ??= { until, statusMessage }),
    pendingWait: () => wait,
    diverge: (err) => (diverged ??= err),
    divergence: () => diverged,
  };
  const withoutSlot = (options: StepOptions | undefined): StepOptions | undefined => {
    if (options?.concurrency === undefined) return options;
    const { concurrency: _slot, ...rest } = options;
    return rest;
  };
  const deps = { store: noWrites(stop), clock, random: () => 0.5 };
  const { records, ...steps } = createSteps(deps, task, run);
  const exec: ExecutionContext = {
    signal,
    ...steps,
    // A new step ends the replay where it is asked: it takes no slot of a concurrency key first.
    step: (name, _fn, options) => steps.step(name, () => stop(name), withoutSlot(options)),
    child: recordedChildren(task, steps.child, stop),
    waitForEvent: createEventWait(deps, task, run, records),
    status: async () => undefined,
    progress: () => undefined,
    now: () => clock.now(),
  };
  let outcome: Awaited<ReturnType<TaskRunner>> | undefined;
  try {
    outcome = await runner(task, exec);
  } catch (err) {
    if (!(err instanceof WaitPending) && !isControlFlow(err)) throw err;
  }
  if (diverged !== undefined)
    return { ok: false, error: diverged.message, expected: diverged.expected, actual: diverged.actual };
  if (reached !== undefined) return { ok: true, reached: 'new-step', step: reached.step };
  if (wait !== undefined || outcome?.kind === 'waiting') return { ok: true, reached: 'wait' };
  if (outcome?.kind === 'input_required') return { ok: true, reached: 'input' };
  return { ok: true, reached: 'end' };
}
