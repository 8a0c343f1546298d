// Waits that grow while something keeps failing (a connection, a locked file, a store not up yet, a retried step):
// how long, and how they are spread so that those failing together do not come back together.

/**
 * The wait before retry `n` (0: the first) of something that keeps failing: `firstMs` multiplied by `factor` `n`
 * times, at most `maxMs`. A growth past what a number holds is the cap, never NaN; 0 when `firstMs` is 0.
 */
export function backoffCeilingMs(n: number, firstMs: number, maxMs: number, factor = 2): number {
  if (firstMs <= 0) return 0;
  return Math.min(maxMs, firstMs * factor ** Math.max(0, n));
}

/** `ms` less up to `spread` of it at random (`random` in [0, 1]): with 0.5, a point in its upper half. */
export const jitteredMs = (ms: number, spread: number, random: number): number => ms * (1 - spread * random);

/**
 * The wait before retry `n` (0: the first): doubling from `firstMs` up to `maxMs`, then a random point in the upper
 * half of that (`random` 0 gives the least, 1 the whole).
 */
export const backoffMs = (
  n: number,
  firstMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number => jitteredMs(backoffCeilingMs(n, firstMs, maxMs), 0.5, 1 - random());
