// Percentiles and the number formats of the suite's lines and report.

export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx];
}

/** Count, median, p99 and maximum of a list of samples. */
export interface Spread {
  n: number;
  p50: number | undefined;
  p99: number | undefined;
  max?: number | undefined;
}

export const spread = (values: readonly number[]): Spread => ({
  n: values.length,
  p50: percentile(values, 50),
  p99: percentile(values, 99),
  max: values.length === 0 ? undefined : Math.max(...values),
});

export const fmtMs = (v: number | undefined): string =>
  v === undefined ? '–' : v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`;
export const fmtMb = (bytes: number | undefined): string =>
  bytes === undefined ? '–' : `${Math.round(bytes / 1048576)} MB`;
export const fmtInt = (n: number | undefined): string => Number(n).toLocaleString('en-US');
