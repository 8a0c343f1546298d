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

/** `text` with its control characters (terminal escapes among them) shown as \xNN, line breaks kept. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, (c) => {
    return c === '\t' ? ' ' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
}

export function log(line: string): void {
  process.stderr.write(`bench: ${printable(line)}\n`);
}
