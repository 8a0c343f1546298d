// The fallback for clients without the tasks extension: its options, per-tool budgets and budgets in words.
import { describe, expect, it } from 'vitest';
import type { TaskPolicy } from '../define.js';
import { DEFAULT_FALLBACK_BUDGET_MS, duration, resolveFallback, toolBudget } from './fallback.js';

describe('resolveFallback', () => {
  it('is on by default, with a 20 s budget, required tools left out and the task_ facade names', () => {
    const expected = {
      enabled: true,
      budgetMs: 20_000,
      required: false,
      names: { status: 'task_status', respond: 'task_respond', cancel: 'task_cancel' },
    };
    expect(DEFAULT_FALLBACK_BUDGET_MS).toBe(20_000);
    expect(resolveFallback(undefined)).toEqual(expected);
    expect(resolveFallback({})).toEqual(expected);
  });
  it('is turned off by false or enabled: false', () => {
    expect(resolveFallback(false).enabled).toBe(false);
    expect(resolveFallback({ enabled: false }).enabled).toBe(false);
    expect(resolveFallback({ enabled: true }).enabled).toBe(true);
  });
  it('takes a budget, the required switch and a prefix for the facade names', () => {
    expect(resolveFallback({ budgetMs: 0, required: true, toolPrefix: 'bg_' })).toEqual({
      enabled: true,
      budgetMs: 0,
      required: true,
      names: { status: 'bg_status', respond: 'bg_respond', cancel: 'bg_cancel' },
    });
    expect(resolveFallback({ budgetMs: 1_500 }).budgetMs).toBe(1_500);
  });
  it('rejects a budget that is not a whole number of ms >= 0', () => {
    for (const budgetMs of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => resolveFallback({ budgetMs })).toThrow(/fallback budget/);
    }
  });
});

describe('toolBudget', () => {
  const server = resolveFallback({ budgetMs: 5_000 });
  const serverRequired = resolveFallback({ budgetMs: 5_000, required: true });
  const off = resolveFallback(false);
  const cases: [string, TaskPolicy | undefined, ReturnType<typeof resolveFallback>, number | undefined][] = [
    ['no task policy', undefined, server, undefined],
    ['never', { support: 'never' }, server, undefined],
    ['never, even opted in', { support: 'never', fallback: true }, server, undefined],
    ['optional', { support: 'optional' }, server, 5_000],
    ['optional, fallback: true', { support: 'optional', fallback: true }, server, 5_000],
    ['optional, fallback: {}', { support: 'optional', fallback: {} }, server, 5_000],
    ['optional, its own budget', { support: 'optional', fallback: { budgetMs: 100 } }, server, 100],
    ['optional, fallback: false', { support: 'optional', fallback: false }, server, undefined],
    ['required', { support: 'required' }, server, undefined],
    ['required, fallback: true', { support: 'required', fallback: true }, server, 5_000],
    ['required, its own budget', { support: 'required', fallback: { budgetMs: 250 } }, server, 250],
    ['required, its own budget of 0', { support: 'required', fallback: { budgetMs: 0 } }, server, 0],
    ['required, server required: true', { support: 'required' }, serverRequired, 5_000],
    [
      'required, server required: true, fallback: false',
      { support: 'required', fallback: false },
      serverRequired,
      undefined,
    ],
    ['server off, optional', { support: 'optional' }, off, undefined],
    ['server off, required with fallback: true', { support: 'required', fallback: true }, off, undefined],
    ['server off, its own budget', { support: 'optional', fallback: { budgetMs: 100 } }, off, undefined],
  ];
  it.each(cases)('%s', (_label, policy, fallback, expected) => {
    expect(toolBudget(policy, fallback)).toBe(expected);
  });
});

describe('duration', () => {
  it('puts a budget in words', () => {
    expect(duration(0)).toBe('0 ms');
    expect(duration(500)).toBe('500 ms');
    expect(duration(999)).toBe('999 ms');
    expect(duration(1_000)).toBe('1 s');
    expect(duration(1_500)).toBe('1.5 s');
    expect(duration(20_000)).toBe('20 s');
  });
});
