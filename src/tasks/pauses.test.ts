import { describe, expect, it } from 'vitest';
import { MAX_PAUSE_NAME_LENGTH, pauseInScope, pauseOf, pauseProblem, type PauseTarget } from './pauses.js';

describe('pauses', () => {
  it('accepts a tool or a key of printable names, with or without a tenant', () => {
    expect(pauseProblem({ kind: 'tool', name: 'send_invoice' })).toBeUndefined();
    expect(pauseProblem({ kind: 'key', name: 'payments', tenant: 'acme' })).toBeUndefined();
    expect(pauseProblem({ kind: 'tool', name: 'x'.repeat(MAX_PAUSE_NAME_LENGTH) })).toBeUndefined();
  });

  it('refuses an unknown kind, and empty, long or unprintable names and tenants', () => {
    expect(pauseProblem({ kind: 'queue' as 'tool', name: 'a' })).toMatch(/kind/);
    for (const name of ['', 'x'.repeat(MAX_PAUSE_NAME_LENGTH + 1), 'a\nb', 'a\u202eb'])
      expect(pauseProblem({ kind: 'tool', name })).toMatch(/^name must be/);
    expect(pauseProblem({ kind: 'tool', name: 'a', tenant: '' })).toMatch(/^tenant must be/);
  });

  it('holds back the tasks of its tool or key, within its tenant or every tenant', () => {
    const pauses: PauseTarget[] = [
      { kind: 'tool', name: 'slow', tenant: 'acme' },
      { kind: 'key', name: 'payments' },
    ];
    expect(pauseOf(pauses, { tool: 'slow', tenant: 'acme' })).toBe(pauses[0]);
    expect(pauseOf(pauses, { tool: 'slow', tenant: 'globex' })).toBeUndefined();
    expect(pauseOf(pauses, { tool: 'echo', tenant: 'globex', concurrency_key: 'payments' })).toBe(pauses[1]);
    expect(pauseOf(pauses, { tool: 'payments', tenant: 'globex', concurrency_key: null })).toBeUndefined();
  });

  it('lets an operator of some tenants pause only for them, one of every tenant for any or all', () => {
    expect(pauseInScope({ tenants: 'all' }, undefined)).toBe(true);
    expect(pauseInScope({ tenants: 'all' }, 'acme')).toBe(true);
    expect(pauseInScope({ tenants: ['acme'] }, 'acme')).toBe(true);
    expect(pauseInScope({ tenants: ['acme'] }, 'globex')).toBe(false);
    expect(pauseInScope({ tenants: ['acme'] }, undefined)).toBe(false);
  });
});
