// The debounce key a new task carries, and what a valid debounce policy is.
import { describe, expect, it } from 'vitest';
import { debouncedMessage, debounceOf, debouncePolicyProblem } from './debounce.js';

describe('debounceOf', () => {
  const call = { args: { repo: 'core' }, owner: 'alice' };
  it('carries a static key as a name, a computed one as derived, and replace only when set', () => {
    expect(debounceOf('t', undefined, call)).toBeUndefined();
    expect(debounceOf('t', { key: 'k', periodMs: 10 }, call)).toEqual({ key: 'k', periodMs: 10 });
    expect(
      debounceOf('t', { key: (a: { repo: string }) => `repo:${a.repo}`, periodMs: 10, replace: true }, call),
    ).toEqual({ key: 'repo:core', periodMs: 10, derived: true, replace: true });
  });
  it('refuses a computed key that is not 1 to 200 printable characters, naming the tool', () => {
    for (const bad of ['', 'x'.repeat(201), 'a\u0000b', 'line\nbreak'])
      expect(() => debounceOf('sync', { key: () => bad, periodMs: 10 }, call)).toThrow(
        'tool "sync": task.debounce: the computed key must be 1 to 200 printable characters',
      );
    expect(() => debounceOf('sync', { key: () => 7 as unknown as string, periodMs: 10 }, call)).toThrow(
      'the computed key must be a string',
    );
  });
});

describe('debouncePolicyProblem', () => {
  it('accepts a window of 1 ms to a day and a valid key, refuses anything else', () => {
    expect(debouncePolicyProblem({ key: 'k', periodMs: 1 })).toBeUndefined();
    expect(debouncePolicyProblem({ key: () => 'k', periodMs: 86_400_000, replace: false })).toBeUndefined();
    for (const periodMs of [0, -1, 1.5, 86_400_001, Number.NaN])
      expect(debouncePolicyProblem({ key: 'k', periodMs })).toMatch(/^periodMs must be/);
    expect(debouncePolicyProblem({ key: '', periodMs: 1 })).toMatch(/^key must be/);
    expect(debouncePolicyProblem({ key: 5 as unknown as string, periodMs: 1 })).toMatch(/^key must be/);
    expect(debouncePolicyProblem({ key: 'k', periodMs: 1, replace: 'yes' as unknown as boolean })).toBe(
      'replace must be a boolean',
    );
  });
});

describe('debouncedMessage', () => {
  it('names the end of the window, and a replacement', () => {
    expect(debouncedMessage(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe(
      'Debounced until 2026-01-02T03:04:05.000Z: calls with the same debounce key until then join this task.',
    );
    expect(debouncedMessage(0, true)).toMatch(/Its arguments were replaced by a later call\.$/);
  });
});
