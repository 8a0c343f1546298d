// The acceptance check both stores' rate tests share: a 10/s limit holds within 10% over 30 s across three replicas.
import { expect } from 'vitest';
import type { TaskStore } from '../../src/tasks/store.js';
import { mostInWindow, runRateAcrossReplicas } from './rate-replicas.js';

export const ACCEPTANCE_MS = 30_000;

/** Runs the three replicas for 30 s with tasks created at 15/s, and checks the starts; returns the measured rate. */
export async function expectRateHeldAcrossReplicas(
  stores: readonly TaskStore[],
  key: string,
): Promise<number> {
  expect(stores).toHaveLength(3);
  const { starts, created } = await runRateAcrossReplicas(stores, {
    key,
    limit: 10,
    periodMs: 1_000,
    createPerSecond: 15,
    runMs: ACCEPTANCE_MS,
  });
  // More were created than the rate lets start: the limit, not the load, set the pace.
  expect(created).toBeGreaterThan(400);
  const first = starts[0] as number;
  const inWindow = starts.filter((t) => t < first + ACCEPTANCE_MS).length;
  const perSecond = inWindow / (ACCEPTANCE_MS / 1_000);
  console.log(`rate limit 10/s across 3 replicas: ${inWindow} starts in 30 s (${perSecond.toFixed(2)}/s)`);
  expect(perSecond).toBeGreaterThanOrEqual(9);
  expect(perSecond).toBeLessThanOrEqual(11);
  // Never a burst (a herd at each period would put 20 or more in some 3 s): any 3 s hold their 30 starts within the
  // same 10%, a start claimed a few ms late on a busy event loop falling into the next window at most.
  expect(mostInWindow(starts, 3_000)).toBeLessThanOrEqual(33);
  return perSecond;
}
