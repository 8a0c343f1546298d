// JWT mode's operator role: granted by a scope or a claim value, scoped by a tenants claim or the token's tenant.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authenticator } from './authenticator.js';
import { createJwtAuthenticator, type JwtAuthOptions } from './jwt.js';

const ISSUER = 'https://auth.example.test';
const AUDIENCE = 'http://127.0.0.1/mcp';
const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-jwt-op-'));
const jwks = join(dir, 'jwks.json');
let sign: (claims: Record<string, unknown>) => Promise<string>;

beforeAll(async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  writeFileSync(
    jwks,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
  );
  sign = (claims) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const authenticator = (operator?: JwtAuthOptions['operator']): Authenticator =>
  createJwtAuthenticator({
    issuer: ISSUER,
    audience: AUDIENCE,
    jwks,
    resourceMetadataUrl: 'http://127.0.0.1/.well-known/oauth-protected-resource/mcp',
    operator,
  });

/** What the authenticator yields for a token with these claims (sub alice, tenant acme unless given). */
async function outcome(auth: Authenticator, claims: Record<string, unknown>) {
  const token = await sign({ sub: 'alice', tenant: 'acme', ...claims });
  return auth.authenticate((name) => (name === 'authorization' ? `Bearer ${token}` : undefined));
}

describe('JWT operator role by scope', () => {
  const auth = () => authenticator({ scope: 'mcp:operate' });

  it('grants the role for the scope in `scope` (space-separated) or `scp` (list or string), own tenant', async () => {
    for (const claims of [
      { scope: 'openid mcp:operate profile' },
      { scp: ['mcp:read', 'mcp:operate'] },
      { scp: 'mcp:operate' },
    ])
      expect(await outcome(auth(), claims)).toEqual({
        ok: true,
        auth: { tenant: 'acme', principal: 'alice' },
        operator: { tenants: ['acme'] },
      });
  });

  it('yields no operator for an ordinary token or a near miss', async () => {
    for (const claims of [
      {},
      { scope: 'openid profile' },
      { scope: 'mcp:operate:all' },
      { scp: ['mcp'] },
      { scp: 7 },
    ]) {
      const o = await outcome(auth(), claims);
      expect(o).toEqual({ ok: true, auth: { tenant: 'acme', principal: 'alice' } });
      expect(o).not.toHaveProperty('operator');
    }
  });

  it('scopes the operator to the token own tenant, the issuer when the token names none', async () => {
    expect(await outcome(auth(), { tenant: undefined, tid: 'globex', scope: 'mcp:operate' })).toMatchObject({
      operator: { tenants: ['globex'] },
    });
    expect(await outcome(auth(), { tenant: undefined, scope: 'mcp:operate' })).toMatchObject({
      auth: { tenant: ISSUER },
      operator: { tenants: [ISSUER] },
    });
  });

  it('grants nothing without operator options, whatever the token claims', async () => {
    const o = await outcome(authenticator(), { scope: 'mcp:operate', roles: ['operator'], tenants: '*' });
    expect(o).not.toHaveProperty('operator');
  });
});

describe('JWT operator role by claim', () => {
  const auth = () =>
    authenticator({ claim: { name: 'roles', value: 'operator' }, tenantsClaim: 'op_tenants' });

  it('grants the role for a claim equal to the value or a list holding it', async () => {
    expect(await outcome(auth(), { roles: 'operator' })).toMatchObject({ operator: { tenants: ['acme'] } });
    expect(await outcome(auth(), { roles: ['reader', 'operator'] })).toMatchObject({
      operator: { tenants: ['acme'] },
    });
    for (const roles of ['operators', 'reader operator', ['Operator'], true, undefined])
      expect(await outcome(auth(), { roles })).not.toHaveProperty('operator');
  });

  it('takes the tenants from the tenants claim: a list, one tenant or "*"', async () => {
    expect(await outcome(auth(), { roles: 'operator', op_tenants: ['t1', 't2'] })).toMatchObject({
      auth: { tenant: 'acme' },
      operator: { tenants: ['t1', 't2'] },
    });
    expect(await outcome(auth(), { roles: 'operator', op_tenants: 't9' })).toMatchObject({
      operator: { tenants: ['t9'] },
    });
    expect(await outcome(auth(), { roles: 'operator', op_tenants: '*' })).toMatchObject({
      operator: { tenants: 'all' },
    });
  });

  it('grants no operator role for a malformed tenants claim, and the caller still gets in', async () => {
    for (const op_tenants of [[], 5, ['t1', 9], ['t1', '*'], '', { t: 1 }]) {
      const o = await outcome(auth(), { roles: 'operator', op_tenants });
      expect(o).toEqual({ ok: true, auth: { tenant: 'acme', principal: 'alice' } });
    }
  });

  it('grants the role when either the scope or the claim is present', async () => {
    const both = authenticator({ scope: 'mcp:operate', claim: { name: 'groups', value: 'ops' } });
    expect(await outcome(both, { groups: ['ops'] })).toHaveProperty('operator');
    expect(await outcome(both, { scope: 'mcp:operate' })).toHaveProperty('operator');
    expect(await outcome(both, { groups: ['dev'], scope: 'mcp:read' })).not.toHaveProperty('operator');
  });

  it('refuses options that could never grant the role', () => {
    expect(() => authenticator({ tenantsClaim: 'x' })).toThrow(/scope or a claim/);
    expect(() => authenticator({ scope: 'a b' })).toThrow(/one scope/);
    expect(() => authenticator({ claim: { name: '', value: 'x' } })).toThrow(/name and a value/);
  });
});
