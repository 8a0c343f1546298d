import { describe, expect, it } from 'vitest';
import { globMatcher } from './globs.js';

describe('globMatcher', () => {
  it('matches * against any run of characters and everything else literally', () => {
    const match = globMatcher(['search_*', 'a.b', '*_report']);
    expect(match('search_web')).toBe(true);
    expect(match('search_')).toBe(true);
    expect(match('a.b')).toBe(true);
    expect(match('axb')).toBe(false);
    expect(match('weekly_report')).toBe(true);
    expect(match('research_web')).toBe(false);
  });

  it('matches nothing without globs', () => {
    expect(globMatcher(undefined)('x')).toBe(false);
    expect(globMatcher([])('x')).toBe(false);
  });
});
