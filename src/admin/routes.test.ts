import { describe, expect, it } from 'vitest';
import { createCsrfTokens } from './csrf.js';
import { matchRoute } from './routes.js';

describe('the routes of the operator API', () => {
  it('names each route with its methods and the task id it holds', () => {
    expect(matchRoute('/admin/api/v1/tasks')).toMatchObject({ kind: 'route', methods: { GET: 'list' } });
    expect(matchRoute('/admin/api/v1/session')).toMatchObject({ methods: { GET: 'session' } });
    expect(matchRoute('/admin/api/v1/overview')).toMatchObject({ methods: { GET: 'overview' } });
    expect(matchRoute('/admin/api/v1/health')).toMatchObject({ methods: { GET: 'health' } });
    expect(matchRoute('/admin/api/v1/events')).toMatchObject({ methods: { GET: 'events' } });
    expect(matchRoute('/admin/api/v1/tasks/t%2F1')).toMatchObject({
      methods: { GET: 'detail', DELETE: 'purge' },
      id: 't/1',
    });
    expect(matchRoute('/admin/api/v1/tasks/t1/cancel')).toMatchObject({
      methods: { POST: 'cancel' },
      id: 't1',
    });
    expect(matchRoute('/admin/api/v1/tasks/t1/retry')).toMatchObject({
      methods: { POST: 'retry' },
      id: 't1',
    });
    for (const action of ['cancel', 'retry', 'purge'])
      expect(matchRoute(`/admin/api/v1/bulk/${action}`)).toEqual({
        kind: 'route',
        label: `bulk/${action}`,
        methods: { POST: `bulk-${action}` },
      });
    expect(matchRoute('/admin/api/v1/bulk/delete')).toEqual({ kind: 'none' });
    expect(matchRoute('/admin/api/v1/bulk')).toEqual({ kind: 'none' });
    expect(matchRoute('/admin/api/v1/pauses')).toEqual({
      kind: 'route',
      label: 'pauses',
      methods: { GET: 'pauses', POST: 'pause', DELETE: 'resume' },
    });
    expect(matchRoute('/admin/api/v1/flow')).toEqual({
      kind: 'route',
      label: 'flow',
      methods: { GET: 'flow' },
    });
  });

  it('leaves other paths to the edge (404) and refuses a malformed id', () => {
    for (const path of [
      '/admin',
      '/admin/api/v1',
      '/admin/api/v1/',
      '/admin/api/v2/tasks',
      '/admin/api/v1/tasks/',
      '/admin/api/v1/tasks/t1/',
      '/admin/api/v1/tasks/t1/purge',
      '/admin/api/v1/tasks/t1/cancel/x',
      '/admin/api/v1/overview/x',
    ])
      expect(matchRoute(path), path).toEqual({ kind: 'none' });
    expect(matchRoute('/admin/api/v1/tasks/%E0')).toEqual({ kind: 'bad_id' });
    expect(matchRoute(`/admin/api/v1/tasks/${'x'.repeat(257)}`)).toEqual({ kind: 'bad_id' });
  });
});

describe('CSRF tokens', () => {
  const alice = { tenant: 'A', principal: 'alice' };
  it('are the same for a caller on every replica with the same secret, and differ by caller and secret', () => {
    const one = createCsrfTokens('secret');
    const token = one.issue(alice);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(createCsrfTokens('secret').check(alice, token)).toBe(true);
    expect(createCsrfTokens('other').check(alice, token)).toBe(false);
    expect(one.issue({ tenant: 'A', principal: 'bob' })).not.toBe(token);
    // The parts are kept apart: ("A b", "c") is not ("A", "b c").
    expect(one.issue({ tenant: 'A b', principal: 'c' })).not.toBe(
      one.issue({ tenant: 'A', principal: 'b c' }),
    );
    expect(one.check(alice, undefined)).toBe(false);
    expect(one.check(alice, '')).toBe(false);
    expect(one.check(alice, token.slice(1))).toBe(false);
  });
});
