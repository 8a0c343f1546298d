// Medians, percentiles, ratios and the pooled statistics of the latency rows.
import type { PooledStats, Percentiles, RunQueueSummary } from './types-rows.js';
import type { ByStatus, LatencySample } from './types.js';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

export function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** a ÷ b to two decimals (a missing percentile counts as 0, as arithmetic on null does). */
export function ratio(a: number | null, b: number | null): number {
  return Math.round((Number(a) / Number(b)) * 100) / 100;
}

export const nsToMs = (ns: bigint | number): number => Number(ns) / 1e6;

/** The p-th percentile (0..1) of an ascending array, rounded to 0.001 ms. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! * 1000) / 1000;
}

export const ascending = (values: number[]): number[] => [...values].sort((a, b) => a - b);

/** A latency row's sample from its per-event latencies (ms) over `seconds`. */
export function latencySample(
  latencies: number[],
  seconds: number,
  extra: Partial<LatencySample> = {},
): LatencySample {
  const sorted = ascending(latencies);
  return {
    rps: round1(latencies.length / seconds),
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    ok: latencies.length,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: Math.round(seconds * 1000) / 1000,
    ...extra,
    latencies,
  };
}

/** Events, percentiles, worst and per-round p99 range of the rounds' lists of ms. */
export function pooledStats(lists: number[][]): PooledStats {
  const all = lists.flat().sort((a, b) => a - b);
  // A round without events has no p99: it counts as 0, as Math.min/max of null do.
  const p99s = lists.map((l) => Number(percentile(ascending(l), 0.99)));
  return {
    events: all.length,
    p50: percentile(all, 0.5),
    p99: percentile(all, 0.99),
    max: Math.round(all[all.length - 1]! * 1000) / 1000,
    p99Range: { min: Math.min(...p99s), max: Math.max(...p99s) },
  };
}

/** Per status (working, completed): events and percentiles pooled over every round's `pick` lists. */
export function pooledByStatus(
  list: LatencySample[],
  pick: (x: LatencySample) => ByStatus<number[]> | undefined,
): ByStatus<Percentiles> {
  const pooled = (st: keyof ByStatus<number[]>): Percentiles => {
    const all = ascending(list.flatMap((x) => pick(x)?.[st] ?? []));
    return { events: all.length, p50: percentile(all, 0.5), p99: percentile(all, 0.99) };
  };
  return { working: pooled('working'), completed: pooled('completed') };
}

/** Steps slower than this (their slowest event, ms) count as slow in the run-queue summary. */
export const SLOW_STEP_MS = 1;

/**
 * The push client's waits for a core, from [slowest event ms, run-queue wait ms] per answered task: the mean
 * wait in the steps whose slowest event took over SLOW_STEP_MS and in the others. Null without schedstat.
 */
export function runQueueSummary(steps: Array<[number, number]>): RunQueueSummary | null {
  if (steps.length === 0) return null;
  const mean = (xs: number[]) => (xs.length === 0 ? null : Math.round((sum(xs) / xs.length) * 1000) / 1000);
  const slow = steps.filter(([ms]) => ms > SLOW_STEP_MS);
  const fast = steps.filter(([ms]) => ms <= SLOW_STEP_MS);
  return {
    steps: steps.length,
    slowSteps: slow.length,
    slowWaitMs: mean(slow.map(([, w]) => w)),
    fastWaitMs: mean(fast.map(([, w]) => w)),
  };
}
