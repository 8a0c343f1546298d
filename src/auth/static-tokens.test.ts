// tokens.json: the operator role (roles, operatorTenants, "*"), its errors, and reloads that keep it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createStaticTokenAuthenticator, parseTokenFile } from './static-tokens.js';

const TOKEN = 'alice-secret-token-0001';
const entry = (extra: Record<string, unknown>) => ({
  token: TOKEN,
  tenant: 'acme',
  principal: 'alice',
  ...extra,
});
const file = (...entries: Record<string, unknown>[]) => JSON.stringify({ tokens: entries });
const bearer = (token: string) => (name: string) =>
  name === 'authorization' ? `Bearer ${token}` : undefined;

/** The one grant of a file with one entry, or the reason it was refused. */
function grantOf(extra: Record<string, unknown>) {
  const parsed = parseTokenFile(file(entry(extra)));
  if (!parsed.ok) return parsed.reason;
  return [...parsed.value.values()][0];
}

describe('tokens.json operator role', () => {
  it('grants no operator scope to an ordinary entry', () => {
    expect(grantOf({})).toEqual({ ok: true, auth: { tenant: 'acme', principal: 'alice' } });
    expect(grantOf({ roles: [] })).not.toHaveProperty('operator');
  });

  it('scopes an operator to its own tenant unless the entry names others', () => {
    expect(grantOf({ roles: ['operator'] })).toMatchObject({ operator: { tenants: ['acme'] } });
    expect(grantOf({ roles: ['operator'], operatorTenants: ['t1', 't2', 't1'] })).toMatchObject({
      auth: { tenant: 'acme', principal: 'alice' },
      operator: { tenants: ['t1', 't2'] },
    });
    expect(grantOf({ roles: ['operator'], operatorTenants: 'globex' })).toMatchObject({
      operator: { tenants: ['globex'] },
    });
  });

  it('grants every tenant only when "*" is written', () => {
    expect(grantOf({ roles: ['operator'], operatorTenants: '*' })).toMatchObject({
      operator: { tenants: 'all' },
    });
    expect(grantOf({ roles: ['operator'], operatorTenants: ['*'] })).toMatchObject({
      operator: { tenants: 'all' },
    });
  });

  it('refuses malformed grants with a reason naming the entry', () => {
    const ok = { token: 'bob-secret-token-000002', tenant: 'acme', principal: 'bob' };
    const reason = (extra: Record<string, unknown>) => {
      const parsed = parseTokenFile(file(ok, entry(extra)));
      return parsed.ok ? 'accepted' : parsed.reason;
    };
    expect(reason({ roles: ['admin'] })).toBe(
      'tokens[1] (principal "alice").roles: unknown role "admin" (known: operator)',
    );
    expect(reason({ roles: ['operator', 'root'] })).toMatch(/^tokens\[1\] .*unknown role "root"/);
    expect(reason({ roles: 'operator' })).toMatch(/^tokens\[1\] .*roles must be a list of role names/);
    expect(reason({ roles: [1] })).toMatch(/roles must be a list/);
    expect(reason({ operatorTenants: '*' })).toMatch(
      /^tokens\[1\] .*operatorTenants needs "roles": \["operator"\]/,
    );
    for (const tenants of [[], '', 7, [''], ['t1', 3], { t1: true }, 'x'.repeat(257)])
      expect(reason({ roles: ['operator'], operatorTenants: tenants })).toMatch(
        /^tokens\[1\] .*operatorTenants must be "\*" or a non-empty list of tenant names$/,
      );
    expect(reason({ roles: ['operator'], operatorTenants: ['t1', '*'] })).toMatch(/write "\*" alone/);
  });

  it('keeps the grants shared between requests frozen', () => {
    const grant = grantOf({ roles: ['operator'], operatorTenants: ['t1'] });
    expect(Object.isFrozen(grant)).toBe(true);
    expect(typeof grant === 'object' && Object.isFrozen(grant.operator?.tenants)).toBe(true);
  });
});

describe('static token authenticator with operators', () => {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-op-tokens-'));
  const path = join(dir, 'tokens.json');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('yields the operator scope with the identity, and none for an ordinary token', async () => {
    const carol = 'carol-secret-token-00003';
    writeFileSync(
      path,
      file(entry({ roles: ['operator'], operatorTenants: '*' }), {
        token: carol,
        tenant: 'globex',
        principal: 'carol',
      }),
    );
    const auth = createStaticTokenAuthenticator(path);
    expect(await auth.authenticate(bearer(TOKEN))).toEqual({
      ok: true,
      auth: { tenant: 'acme', principal: 'alice' },
      operator: { tenants: 'all' },
    });
    const ordinary = await auth.authenticate(bearer(carol));
    expect(ordinary).toEqual({ ok: true, auth: { tenant: 'globex', principal: 'carol' } });
    expect(ordinary).not.toHaveProperty('operator');
  });

  it('reloads grants on SIGHUP and keeps the old ones when the new file has an unknown role', async () => {
    writeFileSync(path, file(entry({})));
    const auth = createStaticTokenAuthenticator(path);
    expect(await auth.authenticate(bearer(TOKEN))).not.toHaveProperty('operator');
    writeFileSync(path, file(entry({ roles: ['operator'] })));
    expect(auth.reload()).toBeUndefined();
    expect(await auth.authenticate(bearer(TOKEN))).toMatchObject({ operator: { tenants: ['acme'] } });
    writeFileSync(path, file(entry({ roles: ['superuser'] })));
    expect(auth.reload()).toBe(
      `${path}: tokens[0] (principal "alice").roles: unknown role "superuser" (known: operator)`,
    );
    expect(await auth.authenticate(bearer(TOKEN))).toMatchObject({ operator: { tenants: ['acme'] } });
    writeFileSync(path, file(entry({})));
    expect(auth.reload()).toBeUndefined();
    expect(await auth.authenticate(bearer(TOKEN))).not.toHaveProperty('operator');
  });
});
