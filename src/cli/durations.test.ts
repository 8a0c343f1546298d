import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './durations.js';

describe('durations', () => {
  it('reads milliseconds and units', () => {
    expect(parseDuration('900000')).toBe(900_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('7d')).toBe(604_800_000);
  });

  it('refuses what is not a positive whole number of ms', () => {
    for (const bad of ['', '0', '-1s', '1w', 'h', '0.5ms', '1e3', '15 minutes'])
      expect(parseDuration(bad)).toBeUndefined();
  });

  it('prints the shortest exact unit', () => {
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(formatDuration(86_400_000)).toBe('1d');
    expect(formatDuration(90_000)).toBe('90s');
    expect(formatDuration(1500)).toBe('1500ms');
  });
});
