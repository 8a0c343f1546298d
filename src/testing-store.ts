// The testing kit's store and runner wrappers (durable-mcp/testing): histories recorded as tasks run, the writes of a
// run that "crashed" (after a step, or inside one; its stream appends too) refused as a dead process's would never arrive, and each step body
// counted as it runs.
import type { RunningTask } from './worker/run-task.js';
import { LeaseLostError, type TaskRunner } from './tasks/execution.js';
import type { AppendResult, TaskStore, TaskStreamsPort } from './tasks/store.js';
import type { ClaimedTask, NewTask } from './tasks/task.js';
import type { TaskHistory } from './testing-replay.js';

/** A history being recorded, per task. */
export interface Recorded extends TaskHistory {
  runs: Record<string, number>;
}

/**
 * A run of the kit: the steps it saved, the saves under way or done (begun), the count after which it crashes (if
 * armed), and its handle.
 */
export interface KitRun {
  saved: number;
  begun: number;
  after: number | undefined;
  handle: RunningTask | undefined;
}

/** The crashes armed, and the writes of crashed runs that are refused. */
export interface Crashes {
  /** A crash after the Nth stored step of the next run (of a task, or of any). */
  armed: { after: number; taskId: string | undefined } | undefined;
  /** A crash inside the body of the named step, in the next run (of a task, or of any) that starts that body. */
  during: { step: string; taskId: string | undefined } | undefined;
  /** `id:token` of runs that crashed. */
  dead: Set<string>;
  /** The kit's runs in flight, by `id:token`. */
  runs: Map<string, KitRun>;
}

export const runKey = (id: string, token: number): string => `${id}:${token}`;

const armedFor = (armed: { taskId: string | undefined } | undefined, taskId: string): boolean =>
  armed !== undefined && (armed.taskId === undefined || armed.taskId === taskId);

/** Registers a run the kit is about to start, taking the crash after a step if one is armed for it. */
export function enterRun(crashes: Crashes, task: ClaimedTask): KitRun {
  const armed = crashes.armed;
  const crashHere = armedFor(armed, task.id);
  if (crashHere) crashes.armed = undefined;
  const run: KitRun = { saved: 0, begun: 0, after: crashHere ? armed?.after : undefined, handle: undefined };
  crashes.runs.set(runKey(task.id, task.token), run);
  return run;
}

/** The process of a run dies here: nothing after this is written, and the lease stays until it expires. */
function kill(crashes: Crashes, key: string): void {
  crashes.dead.add(key);
  crashes.runs.get(key)?.handle?.abort('lease-lost');
}

/** The store as runs see it: records histories, and refuses the writes of crashed runs (a dead process's). */
export function recordingStore(
  store: TaskStore,
  recorded: Map<string, Recorded>,
  crashes: Crashes,
): TaskStore {
  const refused = (id: string, token: number): boolean => crashes.dead.has(runKey(id, token));
  const overrides: { -readonly [K in keyof TaskStore]?: TaskStore[K] } = {
    async create(task: NewTask) {
      const snapshot = await store.create(task);
      if (!recorded.has(snapshot.id))
        recorded.set(snapshot.id, {
          tool: task.tool,
          ...(task.toolVersion === undefined ? {} : { toolVersion: task.toolVersion }),
          args: task.args,
          steps: [],
          answers: { ...task.answers },
          runs: {},
        });
      return snapshot;
    },
    async answer(id, owner, responses, now) {
      const result = await store.answer(id, owner, responses, now);
      const history = recorded.get(id);
      if (result.ok && history !== undefined) Object.assign(history.answers, responses);
      return result;
    },
    async saveStep(id, token, name, value, now, options) {
      if (refused(id, token)) return false;
      const run = crashes.runs.get(runKey(id, token));
      // A run armed to crash after its Nth step stores no step begun after the Nth: with steps in parallel, one begun
      // before the Nth was answered could otherwise share its commit, and the crash would keep N + 1.
      if (run?.after !== undefined && run.begun >= run.after) return false;
      if (run !== undefined) run.begun++;
      const saved = await store.saveStep(id, token, name, value, now, options);
      if (!saved) {
        if (run !== undefined) run.begun--;
        return false;
      }
      recorded.get(id)?.steps.push([name, value]);
      if (run !== undefined && run.after !== undefined && ++run.saved >= run.after)
        kill(crashes, runKey(id, token));
      return true;
    },
    async saveStepFailure(id, token, name, failure, now) {
      return refused(id, token) ? false : store.saveStepFailure(id, token, name, failure, now);
    },
    async setStatusMessage(id, token, message, now, progress) {
      return refused(id, token) ? false : store.setStatusMessage(id, token, message, now, progress);
    },
    async finish(id, token, outcome, now) {
      return refused(id, token) ? false : store.finish(id, token, outcome, now);
    },
    async renew(id, token, leaseMs, now) {
      return refused(id, token)
        ? { held: false, cancelRequested: false }
        : store.renew(id, token, leaseMs, now);
    },
  };
  const streams = store.streams;
  if (streams !== undefined)
    overrides.streams = {
      // Refused like any write of a crashed run: a dead process appends nothing.
      async append(...[id, token, stream, key, data, now, bounds]: Parameters<TaskStreamsPort['append']>) {
        const lost: AppendResult = { kind: 'lost' };
        return refused(id, token) ? lost : streams.append(id, token, stream, key, data, now, bounds);
      },
      read: (id: string, stream: string, from: number, maxChunks: number, maxBytes: number) =>
        streams.read(id, stream, from, maxChunks, maxBytes),
    };
  return new Proxy(store, {
    get: (target, prop, receiver) =>
      Object.hasOwn(overrides, prop)
        ? overrides[prop as keyof TaskStore]
        : Reflect.get(target, prop, receiver),
  });
}

/**
 * A crash armed inside `step` for this run's task: the body starts, then the process dies under it. What the body
 * returns is kept nowhere (its rejection too) and its signal fires, as a dead process's work ends with it; the run
 * sees its lease lost and writes nothing more.
 */
function crashInside(
  crashes: Crashes,
  task: ClaimedTask,
  step: string,
  body: () => unknown,
): Promise<never> | undefined {
  const key = runKey(task.id, task.token);
  if (crashes.during?.step !== step || !armedFor(crashes.during, task.id) || !crashes.runs.has(key))
    return undefined;
  crashes.during = undefined;
  try {
    Promise.resolve(body()).catch(() => undefined);
  } catch {
    // A body that throws at once has started too.
  }
  kill(crashes, key);
  return Promise.reject(new LeaseLostError(task.id));
}

/** The runner, counting each step body as it runs (and crashing a run inside one where a crash is armed). */
export function countingRunner(
  runner: TaskRunner,
  recorded: Map<string, Recorded>,
  crashes: Crashes,
): TaskRunner {
  return (task, exec) =>
    runner(task, {
      ...exec,
      step: (name, fn, options) =>
        exec.step(
          name,
          (attempt) => {
            const runs = recorded.get(task.id)?.runs;
            if (runs !== undefined) runs[name] = (runs[name] ?? 0) + 1;
            return crashInside(crashes, task, name, () => fn(attempt)) ?? fn(attempt);
          },
          options,
        ),
    });
}
