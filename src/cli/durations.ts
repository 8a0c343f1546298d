// Durations on the command line: milliseconds (`900000`) or a number with a unit (`500ms`, `30s`, `15m`, `1h`, `7d`).

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The duration in ms, or undefined when the text is not one (or is not a whole positive number of ms). */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (m === null) return undefined;
  const ms = Number(m[1]) * (UNITS[m[2] ?? 'ms'] ?? 1);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : undefined;
}

/** The shortest exact spelling of a duration: 3600000 → `1h`, 90000 → `90s`, 1500 → `1500ms`. */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNITS[unit] as number;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
