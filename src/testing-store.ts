// The testing kit's store and runner wrappers (durable-mcp/testing): histories recorded as tasks run, the writes of a
// run that "crashed" refused as a dead process's would never arrive, and each step body counted as it runs.
import type { RunningTask } from './worker/run-task.js';
import type { TaskRunner } from './tasks/execution.js';
import type { TaskStore } from './tasks/store.js';
import type { NewTask } from './tasks/task.js';
import type { TaskHistory } from './testing-replay.js';

/** A history being recorded, per task. */
export interface Recorded extends TaskHistory {
  runs: Record<string, number>;
}

/** The run a crash is armed for, and the writes of crashed runs that are refused. */
export interface Crashes {
  armed: { after: number; taskId: string | undefined } | undefined;
  /** `id:token` of runs that crashed. */
  dead: Set<string>;
  /** Saved steps per running run, and its handle. */
  runs: Map<string, { saved: number; after: number | undefined; handle: RunningTask | undefined }>;
}

export const runKey = (id: string, token: number): string => `${id}:${token}`;

/** The store as runs see it: records histories, and refuses the writes of crashed runs (a dead process's). */
export function recordingStore(
  store: TaskStore,
  recorded: Map<string, Recorded>,
  crashes: Crashes,
): TaskStore {
  const refused = (id: string, token: number): boolean => crashes.dead.has(runKey(id, token));
  const overrides: Partial<TaskStore> = {
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
      const saved = await store.saveStep(id, token, name, value, now, options);
      if (!saved) return false;
      recorded.get(id)?.steps.push([name, value]);
      const run = crashes.runs.get(runKey(id, token));
      if (run !== undefined && run.after !== undefined && ++run.saved >= run.after) {
        // The process dies here: nothing after this step is written, and the lease stays until it expires.
        crashes.dead.add(runKey(id, token));
        run.handle?.abort('lease-lost');
      }
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
  return new Proxy(store, {
    get: (target, prop, receiver) =>
      Object.hasOwn(overrides, prop)
        ? overrides[prop as keyof TaskStore]
        : Reflect.get(target, prop, receiver),
  });
}

/** The runner, counting each step body as it runs. */
export function countingRunner(runner: TaskRunner, recorded: Map<string, Recorded>): TaskRunner {
  return (task, exec) =>
    runner(task, {
      ...exec,
      step: (name, fn, options) =>
        exec.step(
          name,
          (attempt) => {
            const runs = recorded.get(task.id)?.runs;
            if (runs !== undefined) runs[name] = (runs[name] ?? 0) + 1;
            return fn(attempt);
          },
          options,
        ),
    });
}
