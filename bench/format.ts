// Number formats of the row names, the progress lines and the tables, and the progress log.

export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Compact count for row names: 1k, 10k, 1M. */
export function fmtCount(n: number): string {
  if (n >= 1e6 && n % 1e6 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e3 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** Bytes as MiB with one decimal. */
export function fmtMiB(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(1);
}

export function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}
