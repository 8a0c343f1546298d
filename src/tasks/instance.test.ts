import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { instanceHost, newWorkerId, processInstance } from './instance.js';

describe('the name of this process', () => {
  it('is <host>:<pid>, and a worker id begins with it', () => {
    expect(processInstance()).toBe(`${hostname()}:${process.pid}`);
    const id = newWorkerId();
    expect(id.startsWith(`${processInstance()}:w_`)).toBe(true);
    expect(id).toMatch(/:w_[0-9a-f]{12}$/);
    expect(newWorkerId()).not.toBe(id);
  });

  it('keeps a host name safe to print and to split at its colons, and at most 63 characters', () => {
    expect(instanceHost('db-1.eu.example')).toBe('db-1.eu.example');
    expect(instanceHost('a b:c\u001b[2J\u202e')).toBe('a_b_c__2J_');
    expect(instanceHost('x'.repeat(300))).toBe('x'.repeat(63));
    expect(instanceHost('')).toBe('unknown');
  });
});
