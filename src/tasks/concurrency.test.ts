import { describe, expect, it } from 'vitest';
import {
  concurrencyOf,
  concurrencyProblem,
  MAX_CONCURRENCY_KEY_LENGTH,
  policyProblem,
} from './concurrency.js';

describe('concurrency limits', () => {
  it('default the key to the tool and keep the limit', () => {
    expect(concurrencyOf('deploy', { limit: 1 })).toEqual({ key: 'deploy', limit: 1 });
    expect(concurrencyOf('pay', { limit: 25, key: 'payments' })).toEqual({ key: 'payments', limit: 25 });
    expect(concurrencyOf('pay', undefined)).toBeUndefined();
  });

  it("carry hold 'task' (a slot held until the task ends), and refuse any other hold than 'run' or 'task'", () => {
    expect(concurrencyOf('deploy', { limit: 1, hold: 'task' })).toEqual({
      key: 'deploy',
      limit: 1,
      hold: 'task',
    });
    expect(concurrencyOf('deploy', { limit: 1, hold: 'run' })).toEqual({ key: 'deploy', limit: 1 });
    const perEnv = { limit: 1, hold: 'task' as const, key: (args: { env: string }) => `deploy:${args.env}` };
    expect(concurrencyOf('deploy', perEnv, { args: { env: 'prod' }, owner: {} })).toEqual({
      key: 'deploy:prod',
      limit: 1,
      derived: true,
      hold: 'task',
    });
    expect(policyProblem('deploy', { limit: 1, hold: 'run' })).toBeUndefined();
    expect(policyProblem('deploy', { limit: 1, hold: 'always' as 'task' })).toMatch(/^hold must be/);
  });

  it('refuse limits that are not whole numbers from 1 and keys that are empty, long or unprintable', () => {
    expect(concurrencyProblem(2, 'payments')).toBeUndefined();
    for (const limit of [0, -1, 1.5, Number.NaN, Infinity, 1_000_001])
      expect(concurrencyProblem(limit, 'k')).toMatch(/^limit/);
    for (const key of ['', 'x'.repeat(MAX_CONCURRENCY_KEY_LENGTH + 1), 'a\nb', 'a\u202eb'])
      expect(concurrencyProblem(1, key)).toMatch(/^key/);
  });
});

describe('a concurrency key computed from the call', () => {
  const owner = { tenant: 'acme', principal: 'alice' };
  const perCustomer = {
    limit: 2,
    key: (args: { customer?: unknown }, who: typeof owner) => `${who.tenant}/${String(args.customer)}`,
  };

  it('is computed from the arguments and the caller, and marked derived', () => {
    expect(concurrencyOf('charge', perCustomer, { args: { customer: 'c-42' }, owner })).toEqual({
      key: 'acme/c-42',
      limit: 2,
      derived: true,
    });
  });

  it('is checked like any key, naming the tool', () => {
    const call = { args: { customer: 'x'.repeat(300) }, owner };
    expect(() => concurrencyOf('charge', perCustomer, call)).toThrow(
      /^tool "charge": task.concurrency: the computed key must be/,
    );
    const notText = { limit: 1, key: () => 42 as unknown as string };
    expect(() => concurrencyOf('charge', notText, { args: {}, owner })).toThrow(/key must be a string/);
  });

  it('is not checked at registration, where only the limit is', () => {
    expect(policyProblem('charge', perCustomer)).toBeUndefined();
    expect(policyProblem('charge', { ...perCustomer, limit: 0 })).toMatch(/^limit/);
  });
});
