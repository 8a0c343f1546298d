// ctx.map: one step per item of a list, at most `concurrency` of them running at once, the results in item order.
import { mergeStepOptions, type StepAttempt, type StepConcurrency, type StepOptions } from './execution.js';
import type { RetryPolicy } from './retry.js';
import type { JsonValue } from './task.js';

/** Items of one ctx.map running at once when `concurrency` is not given. */
export const MAP_DEFAULT_CONCURRENCY = 10;
/** The most items of one ctx.map that may run at once. */
export const MAP_MAX_CONCURRENCY = 100;
/** How deeply an item may nest arrays and objects. */
const MAX_ITEM_DEPTH = 64;

/** How `ctx.map` runs its items: how many at once, and the step options of each item's step. */
export interface MapOptions {
  /** Items whose steps run at once (a whole number from 1 to 100; default 10). */
  concurrency?: number;
  /** How often and how patiently to retry a failing item (each item's step retries on its own). */
  retry?: RetryPolicy;
  /** Each attempt's time bound, for every item's step. */
  timeoutMs?: number;
  /** A slot of a shared key each item's step holds while its body runs (StepOptions.concurrency). */
  stepConcurrency?: StepConcurrency;
}

/** What `ctx.map` needs of the context it runs in. */
export interface MapRun {
  step<T extends JsonValue | void>(
    name: string,
    fn: (attempt: StepAttempt) => T | Promise<T>,
    options?: StepOptions,
  ): Promise<T>;
  /**
   * Before any item runs: whether each of `names` is kept already (a replay returns those first, so that the items
   * it runs anew come after them, as in the recorded history). Throws when the items not kept would take the task
   * past its bound on steps.
   */
  plan(what: string, names: readonly string[]): readonly boolean[];
}

/** The name of item `index`'s step in ctx.map `name`. */
export const mapItemName = (name: string, index: number): string => `${name}[${index}]`;

/** What is wrong with `value` as a JSON value (a path to the first offending part), or undefined. */
function jsonProblem(value: unknown, path: string, depth: number): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${path} is not a finite number`;
  if (typeof value !== 'object') return `${path} is a ${typeof value}`;
  if (depth >= MAX_ITEM_DEPTH) return `${path} nests more than ${MAX_ITEM_DEPTH} levels deep`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = jsonProblem(value[i], `${path}[${i}]`, depth + 1);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return `${path} is not a plain object`;
  for (const [key, inner] of Object.entries(value)) {
    const problem = jsonProblem(inner, `${path}.${key}`, depth + 1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** The options checked: a TypeError (RangeError for a concurrency out of bounds) naming what is wrong. */
function checkedConcurrency(name: string, options: MapOptions): number {
  const { concurrency = MAP_DEFAULT_CONCURRENCY } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAP_MAX_CONCURRENCY)
    throw new RangeError(
      `map "${name}": concurrency must be a whole number from 1 to ${MAP_MAX_CONCURRENCY}, not ${String(concurrency)}`,
    );
  return concurrency;
}

/**
 * Runs `fn` on each item as step `name[index]`, at most `concurrency` at once, and returns the results in item
 * order. Everything is checked before any body runs (the name, the items as JSON values, the options, the room for
 * the items' steps). Items kept by an earlier run return their values without running. An item that fails for good
 * stops new items from starting; the map throws its error once the items already running have settled (their values
 * are kept for a later run). The first error thrown wins.
 */
export async function mapSteps<I extends JsonValue, T extends JsonValue | void>(
  run: MapRun,
  name: string,
  items: readonly I[],
  fn: (item: I, index: number, attempt: StepAttempt) => T | Promise<T>,
  options: MapOptions = {},
): Promise<T[]> {
  if (typeof name !== 'string' || name === '')
    throw new TypeError('map: the name must be a non-empty string');
  if (!Array.isArray(items)) throw new TypeError(`map "${name}": items must be an array`);
  if (typeof fn !== 'function') throw new TypeError(`map "${name}": fn must be a function`);
  const width = checkedConcurrency(name, options);
  for (let i = 0; i < items.length; i++) {
    const problem = jsonProblem(items[i], `items[${i}]`, 0);
    if (problem !== undefined)
      throw new TypeError(`map "${name}": every item must be a JSON value: ${problem}`);
  }
  const { concurrency: _width, stepConcurrency, ...rest } = options;
  const stepOptions = mergeStepOptions(
    rest,
    stepConcurrency === undefined ? {} : { concurrency: stepConcurrency },
  );
  const names = items.map((_, i) => mapItemName(name, i));
  const kept = run.plan(`map "${name}"`, names);
  const results = new Array<T>(items.length);
  const runItem = async (i: number): Promise<void> => {
    results[i] = await run.step(names[i] as string, (a) => fn(items[i] as I, i, a), stepOptions);
  };
  // Kept items first (they run nothing), then the others, `width` at a time in item order.
  const fresh: number[] = [];
  const replayed: Promise<void>[] = [];
  for (let i = 0; i < items.length; i++) {
    if (kept[i] === true) replayed.push(runItem(i));
    else fresh.push(i);
  }
  await Promise.all(replayed);
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (failure === undefined && next < fresh.length) {
      const i = fresh[next++] as number;
      try {
        await runItem(i);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, fresh.length) }, lane));
  if (failure !== undefined) throw failure.err;
  return results;
}
