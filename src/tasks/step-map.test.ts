// ctx.map's order of work: the items an earlier run kept are asked first (they run nothing), then the others in item
// order, `concurrency` at a time; nothing runs when the plan refuses the items.
import { describe, expect, it } from 'vitest';
import type { StepAttempt } from './execution.js';
import { mapSteps, type MapRun } from './step-map.js';
import type { JsonValue } from './task.js';

/** A run that keeps the items named in `kept` and logs the steps asked, in order. */
function fakeRun(kept: Record<string, JsonValue>, asked: string[]): MapRun {
  return {
    async step<T extends JsonValue | void>(name: string, fn: (a: StepAttempt) => T | Promise<T>): Promise<T> {
      asked.push(name);
      if (Object.hasOwn(kept, name)) return kept[name] as T;
      await new Promise((resolve) => setImmediate(resolve));
      return fn({ signal: new AbortController().signal, attempt: 1 });
    },
    plan: (_what, names) => names.map((name) => Object.hasOwn(kept, name)),
  };
}

describe('mapSteps', () => {
  it('asks the kept items first, then runs the others in item order', async () => {
    const asked: string[] = [];
    const ran: number[] = [];
    const out = await mapSteps(
      fakeRun({ 'm[3]': 'kept 3', 'm[1]': 'kept 1' }, asked),
      'm',
      [0, 1, 2, 3, 4],
      (item) => {
        ran.push(item);
        return `ran ${item}`;
      },
      { concurrency: 2 },
    );
    expect(out).toEqual(['ran 0', 'kept 1', 'ran 2', 'kept 3', 'ran 4']);
    expect(asked.slice(0, 2)).toEqual(['m[1]', 'm[3]']);
    expect(ran).toEqual([0, 2, 4]);
  });

  it('runs nothing when the plan refuses the items', async () => {
    const asked: string[] = [];
    const run: MapRun = {
      ...fakeRun({}, asked),
      plan: () => {
        throw new Error('no room');
      },
    };
    await expect(mapSteps(run, 'm', [1, 2], (n) => n)).rejects.toThrow('no room');
    expect(asked).toEqual([]);
  });

  it('returns an empty list for no items, running nothing', async () => {
    const asked: string[] = [];
    expect(await mapSteps(fakeRun({}, asked), 'm', [], (n: number) => n)).toEqual([]);
    expect(asked).toEqual([]);
  });
});
