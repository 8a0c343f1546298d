import { describe, expect, it } from 'vitest';
import { parseBearerChallenge } from './challenge.js';
import { hasScopes, selectScope, unionScopes, withOfflineAccess } from './scopes.js';

describe('scope selection', () => {
  it('takes the given scope, else the challenge, else scopes_supported, else none', () => {
    expect(selectScope({ requested: 'a', challenged: 'b', scopesSupported: ['c'] })).toBe('a');
    expect(selectScope({ challenged: 'b', scopesSupported: ['c'] })).toBe('b');
    expect(selectScope({ scopesSupported: ['c', 'd'] })).toBe('c d');
    expect(selectScope({ scopesSupported: [] })).toBeUndefined();
    expect(selectScope({})).toBeUndefined();
  });

  it('unions scope lists without repeats, in order', () => {
    expect(unionScopes('read', 'write read', undefined)).toBe('read write');
    expect(unionScopes(undefined, '')).toBeUndefined();
    expect(hasScopes('read write', 'write')).toBe(true);
    expect(hasScopes('read', 'read write')).toBe(false);
    expect(hasScopes(undefined, 'read')).toBe(false);
  });

  it('adds offline_access only where the authorization server lists it and a scope is asked for', () => {
    expect(withOfflineAccess('read', ['read', 'offline_access'])).toBe('read offline_access');
    expect(withOfflineAccess('read', ['read'])).toBe('read');
    expect(withOfflineAccess(undefined, ['offline_access'])).toBeUndefined();
  });
});

describe('parseBearerChallenge', () => {
  it('reads error, scope and resource_metadata, quoted or not', () => {
    expect(
      parseBearerChallenge(
        'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.example/.well-known/p"',
      ),
    ).toEqual({
      error: 'insufficient_scope',
      scope: 'a b',
      resourceMetadata: 'https://x.example/.well-known/p',
    });
    expect(parseBearerChallenge('Basic realm="x", Bearer error=invalid_token')).toEqual({
      error: 'invalid_token',
    });
    expect(parseBearerChallenge('Bearer')).toEqual({});
    expect(parseBearerChallenge(null)).toEqual({});
    expect(parseBearerChallenge('Basic realm="x"')).toEqual({});
  });
});
