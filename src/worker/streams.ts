// ExecutionContext.appendChunk: a run's appends to its task's streams, each named by where the code makes it so a
// replay does not repeat a chunk. The k-th append to a stream from the handler's own code is named `/k`; from attempt
// n of step s, `s#n/k` (a step's body runs again only when its attempt was not kept, and a replay skips a kept
// step's body, so counting the handler's appends and each attempt's apart keeps the names of a replay in step with
// the run it replays). Appends to one stream are written one at a time, in the order they were made.
import type { Clock } from '../tasks/clock.js';
import { LeaseLostError, type ExecutionContext } from '../tasks/execution.js';
import { DEFAULT_TASK_LIMITS, streamFull, type TaskLimits } from '../tasks/limits.js';
import type { TaskStore } from '../tasks/store.js';
import type { ClaimedTask } from '../tasks/task.js';
import { currentStepBody } from './step-bodies.js';
import type { RunState } from './steps.js';

export interface StreamDeps {
  store: TaskStore;
  clock: Clock;
  limits?: Partial<Pick<TaskLimits, 'maxStreamChunksPerTask' | 'maxStreamBytesPerTask'>>;
}

export function createAppendChunk(
  deps: StreamDeps,
  task: ClaimedTask,
  run: RunState,
): ExecutionContext['appendChunk'] {
  const port = deps.store.streams;
  if (port === undefined) return undefined;
  const limits = {
    ...DEFAULT_TASK_LIMITS,
    ...Object.fromEntries(Object.entries(deps.limits ?? {}).filter(([, v]) => v !== undefined)),
  };
  const bounds = { maxChunks: limits.maxStreamChunksPerTask, maxBytes: limits.maxStreamBytesPerTask };
  const counts = new Map<string, number>();
  const tails = new Map<string, Promise<unknown>>();
  const write = async (stream: string, key: string, chunk: string): Promise<number> => {
    if (run.leaseLost()) throw new LeaseLostError(task.id);
    let result;
    try {
      result = await port.append(task.id, task.token, stream, key, chunk, deps.clock.now(), bounds);
    } catch (err) {
      throw run.onWriteError(err);
    }
    if (result.kind === 'lost') {
      run.onLeaseLost();
      throw new LeaseLostError(task.id);
    }
    if (result.kind === 'full') throw streamFull(stream, result.bound, limits);
    return result.seq;
  };
  return (stream, chunk) => {
    if (typeof chunk !== 'string')
      return Promise.reject(new TypeError(`stream "${stream}": a chunk must be a string`));
    // Named now, in the order the code appends, whatever order the writes end in.
    const body = currentStepBody();
    const scope = `${body}\u0000${stream}`;
    const k = counts.get(scope) ?? 0;
    counts.set(scope, k + 1);
    const key = `${body}/${k}`;
    const previous = tails.get(stream) ?? Promise.resolve();
    const written = previous.catch(() => undefined).then(() => write(stream, key, chunk));
    tails.set(stream, written);
    // A handler that does not wait for an append must not bring down the process with its refusal.
    written.catch(() => undefined);
    return written;
  };
}
