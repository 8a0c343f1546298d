// ctx.waitForEvent in a run: the wait is registered with the store and the run ends waiting (no worker held) until
// the event is delivered (which makes the task runnable at once) or the wait times out; the answer is kept under the
// wait's name, so that every replay gets the same one.
import type { EventResult, ExecutionContext } from '../tasks/execution.js';
import type { ClaimedTask, JsonValue } from '../tasks/task.js';
import { guard, wait, writeOrStop, type RunRecords, type RunState, type StepDeps } from './steps.js';

const iso = (t: number): string => new Date(t).toISOString();

/** The answer kept under the wait's name; a step or sleep kept there is refused (names are shared). */
function keptAnswer(name: string, memo: JsonValue | undefined): EventResult {
  const kept = typeof memo === 'object' && memo !== null && !Array.isArray(memo) ? memo : undefined;
  if (kept?.event !== name || typeof kept.received !== 'boolean')
    throw new Error(`"${name}" names a step or a sleep, not an event wait: give the wait its own name`);
  return kept.received
    ? { received: true, payload: kept.payload ?? null }
    : { received: false, timedOut: true };
}

export function createEventWait(
  deps: StepDeps,
  task: ClaimedTask,
  run: RunState,
  { replay, keep, take }: RunRecords,
): ExecutionContext['waitForEvent'] {
  const port = deps.store.events;
  if (port === undefined) return undefined;
  return async (name, options) => {
    replay.use(name);
    if (Object.hasOwn(task.steps, name)) return keptAnswer(name, task.steps[name]);
    guard(task, run);
    await replay.checkNew(name);
    guard(task, run);
    const what = `event wait "${name}"`;
    const free = take(what);
    try {
      // writeOrStop throws unless the store answered (undefined: the run no longer holds the task).
      let state: Awaited<ReturnType<typeof port.wait>>;
      await writeOrStop(task, run, async () => {
        state = await port.wait(
          task.id,
          task.token,
          name,
          { until: options.until, schema: options.schema },
          deps.clock.now(),
        );
        return state !== undefined;
      });
      const found = state as NonNullable<typeof state>;
      if (found.kind === 'waiting')
        return wait(
          run,
          found.until,
          `Waiting for event "${name}" until ${iso(found.until)}.`,
          'event',
          name,
        );
      if (found.kind === 'received' && !found.checked) {
        const problem = options.check?.(found.payload);
        if (problem !== undefined)
          throw new TypeError(
            `event "${name}" arrived before the wait with a payload its schema refuses: ${problem}`,
          );
      }
      const answer: EventResult =
        found.kind === 'received'
          ? { received: true, payload: found.payload }
          : { received: false, timedOut: true };
      await keep(what, name, { event: name, ...answer });
      return answer;
    } finally {
      free();
    }
  };
}
