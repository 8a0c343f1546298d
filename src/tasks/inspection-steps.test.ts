import { describe, expect, it } from 'vitest';
import { inspectionSteps } from './inspection-steps.js';

const names = (steps: { name: string }[]): string[] => steps.map((s) => s.name);

describe('the steps of an inspection', () => {
  it('are in the order they were done, whatever their names', () => {
    const done = [
      { name: 'alpha', seq: 2, savedAt: 20 },
      { name: 'mid', seq: 3, savedAt: 20 },
      { name: 'zeta', seq: 1, savedAt: 30 },
    ];
    expect(names(inspectionSteps(done, {}))).toEqual(['zeta', 'alpha', 'mid']);
  });

  it('put steps saved before the order was recorded first: unknown times, then by saved time, then by name', () => {
    const done = [
      { name: 'after-upgrade', seq: 1, savedAt: 5 },
      { name: 'old-late', seq: null, savedAt: 40 },
      { name: 'old-early', seq: null, savedAt: 10 },
      { name: 'oldest-b', seq: null, savedAt: null },
      { name: 'oldest-a' },
    ];
    expect(names(inspectionSteps(done, {}))).toEqual([
      'oldest-a',
      'oldest-b',
      'old-early',
      'old-late',
      'after-upgrade',
    ]);
  });

  it('end with the steps that only failed, by the time of their last failure, with their attempts', () => {
    const failure = (at: number) => ({ failed: 2, last: { attempt: 2, name: 'Error', message: 'no', at } });
    const steps = inspectionSteps([{ name: 'b', seq: 1, startedAt: 1, savedAt: 3 }], {
      z: failure(10),
      a: failure(20),
      b: failure(2),
    });
    expect(steps).toEqual([
      { name: 'b', done: true, failedAttempts: 2, lastFailure: failure(2).last, startedAt: 1, savedAt: 3 },
      { name: 'z', done: false, failedAttempts: 2, lastFailure: failure(10).last },
      { name: 'a', done: false, failedAttempts: 2, lastFailure: failure(20).last },
    ]);
  });
});
