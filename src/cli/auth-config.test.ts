// The operator-role flags of `serve`: parsed into the authenticator's options, or a usage error (exit 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UsageError } from './args.js';
import { authFlagsFrom, buildAuth } from './auth-config.js';
import { main } from './main.js';

const JWT = { 'jwt-issuer': 'https://auth.example.test', jwks: '/etc/jwks.json' };
const none = () => undefined;

afterEach(() => vi.restoreAllMocks());

describe('operator flags', () => {
  it('sets no operator without any operator flag', () => {
    expect(authFlagsFrom(JWT)).toMatchObject({ jwtOperator: undefined, devOperator: false });
    expect(authFlagsFrom({})).toMatchObject({ jwtOperator: undefined, devOperator: false });
  });

  it('reads the JWT operator scope, claim and tenants claim', () => {
    expect(
      authFlagsFrom({
        ...JWT,
        'jwt-operator-scope': 'mcp:operate',
        'jwt-operator-claim': 'https://example.test/roles=ops=1',
        'jwt-operator-tenants-claim': 'op_tenants',
      }).jwtOperator,
    ).toEqual({
      scope: 'mcp:operate',
      claim: { name: 'https://example.test/roles', value: 'ops=1' },
      tenantsClaim: 'op_tenants',
    });
  });

  it.each([
    [{ ...JWT, 'jwt-operator-scope': 'a b' }, '--jwt-operator-scope must be one scope, without spaces'],
    [{ ...JWT, 'jwt-operator-scope': '' }, '--jwt-operator-scope must be one scope, without spaces'],
    [
      { ...JWT, 'jwt-operator-claim': 'roles' },
      '--jwt-operator-claim must be NAME=VALUE, e.g. roles=operator',
    ],
    [{ ...JWT, 'jwt-operator-claim': '=operator' }, '--jwt-operator-claim must be NAME=VALUE'],
    [{ ...JWT, 'jwt-operator-claim': 'roles=' }, '--jwt-operator-claim must be NAME=VALUE'],
    [
      { ...JWT, 'jwt-operator-tenants-claim': 't' },
      '--jwt-operator-tenants-claim needs --jwt-operator-scope',
    ],
    [{ ...JWT, 'jwt-operator-scope': 's', 'jwt-operator-tenants-claim': '' }, 'needs a claim name'],
    [{ 'jwt-operator-scope': 's' }, '--jwt-operator-* flags need JWT auth (--jwt-issuer, --jwks)'],
    [{ auth: 'tokens.json', 'jwt-operator-claim': 'r=o' }, 'with --auth grant the role in tokens.json'],
    [{ ...JWT, 'dev-operator': true }, '--dev-operator is for anonymous development mode'],
    [{ auth: 'tokens.json', 'dev-operator': true }, '--dev-operator is for anonymous development mode'],
  ])('refuses %j', (values, message) => {
    expect(() => authFlagsFrom(values)).toThrow(UsageError);
    expect(() => authFlagsFrom(values)).toThrow(message);
  });

  it('makes the anonymous caller an operator of every tenant only with --dev-operator', async () => {
    const plain = buildAuth(authFlagsFrom({}), 'http://127.0.0.1:3000/mcp');
    expect(await plain.authenticator.authenticate(none)).not.toHaveProperty('operator');
    const dev = buildAuth(authFlagsFrom({ 'dev-operator': true }), 'http://127.0.0.1:3000/mcp');
    expect(await dev.authenticator.authenticate(none)).toEqual({
      ok: true,
      auth: { tenant: 'default', principal: 'anonymous' },
      operator: { tenants: 'all' },
    });
    expect(dev.describe).toMatch(/an operator of every tenant/);
    expect([plain.operators, dev.operators]).toEqual([false, true]);
  });

  it('tells whether the authenticator can grant the role (the operator API is served only then)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-auth-'));
    try {
      const file = join(dir, 'tokens.json');
      const user = { token: 'user-token-0123456789', tenant: 'A', principal: 'u' };
      writeFileSync(file, JSON.stringify({ tokens: [user] }));
      expect(buildAuth(authFlagsFrom({ auth: file }), 'http://127.0.0.1:3000/mcp').operators).toBe(false);
      const ops = { token: 'ops-token-01234567890', tenant: 'A', principal: 'o', roles: ['operator'] };
      writeFileSync(file, JSON.stringify({ tokens: [user, ops] }));
      expect(buildAuth(authFlagsFrom({ auth: file }), 'http://127.0.0.1:3000/mcp').operators).toBe(true);
      const jwt = (values: Record<string, string>) =>
        buildAuth(
          authFlagsFrom({ ...JWT, jwks: 'https://auth.example.test/jwks', ...values }),
          'http://127.0.0.1:3000/mcp',
        ).operators;
      expect(jwt({})).toBe(false);
      expect(jwt({ 'jwt-operator-scope': 'ops' })).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends `serve` with exit 2 and the reason before anything is opened', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void errors.push(String(line)));
    expect(await main(['serve', '--port', '0', '--jwt-operator-scope', 'ops'])).toBe(2);
    expect(await main(['serve', '--port', '0', '--dev-operator', '--auth', 'nowhere.json'])).toBe(2);
    expect(errors).toEqual([
      'durable-mcp serve: --jwt-operator-* flags need JWT auth (--jwt-issuer, --jwks)',
      'durable-mcp serve: --dev-operator is for anonymous development mode; grant the operator role in tokens.json or with --jwt-operator-*',
    ]);
  });
});
