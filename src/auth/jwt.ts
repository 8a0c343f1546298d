// JWT access tokens (OAuth 2.1 resource server): signature via a JWKS, issuer, audience, expiry with small skew.
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Authenticator, AuthOutcome } from './authenticator.js';
import { bearerToken, challenge } from './bearer.js';
import { checkJwtOperatorOptions, jwtOperatorScope, type JwtOperatorOptions } from './jwt-operator.js';

export type { JwtOperatorOptions };

export interface JwtAuthOptions {
  issuer: string;
  /** The server's resource URI, expected in `aud`. */
  audience: string;
  /** A JWKS file path or an https URL. */
  jwks: string;
  /** Claims tried in order for the tenant (default `tenant`, `tid`); falls back to the issuer. */
  tenantClaims?: string[];
  /** Claim naming the principal (default `sub`). */
  principalClaim?: string;
  clockToleranceSec?: number;
  /** URL of the protected resource metadata, advertised in challenges. */
  resourceMetadataUrl: string;
  /** Which tokens are operators' and of which tenants (default: none is). */
  operator?: JwtOperatorOptions;
}

function keySet(jwks: string): Parameters<typeof jwtVerify>[1] {
  if (/^https:\/\//i.test(jwks))
    return createRemoteJWKSet(new URL(jwks), { timeoutDuration: 5_000, cooldownDuration: 30_000 });
  if (/^[a-z]+:\/\//i.test(jwks)) throw new Error(`--jwks must be a file path or an https URL, not ${jwks}`);
  return createLocalJWKSet(JSON.parse(readFileSync(jwks, 'utf8')) as Parameters<typeof createLocalJWKSet>[0]);
}

const claimText = (payload: JWTPayload, name: string): string | undefined => {
  const v = payload[name];
  return typeof v === 'string' && v.length > 0 && v.length <= 256 ? v : undefined;
};

export function createJwtAuthenticator(options: JwtAuthOptions): Authenticator {
  const keys = keySet(options.jwks);
  const tenantClaims = options.tenantClaims ?? ['tenant', 'tid'];
  const principalClaim = options.principalClaim ?? 'sub';
  const operator = options.operator;
  if (operator !== undefined) checkJwtOperatorOptions(operator);
  const refuse = (description: string): AuthOutcome => ({
    ok: false,
    status: 401,
    challenge: challenge({
      resourceMetadata: options.resourceMetadataUrl,
      error: 'invalid_token',
      description,
    }),
    message: `Invalid access token: ${description}`,
  });
  const missing: AuthOutcome = {
    ok: false,
    status: 401,
    challenge: challenge({ resourceMetadata: options.resourceMetadataUrl }),
    message: 'Authentication required',
  };
  return {
    mode: 'jwt',
    async authenticate(header) {
      const token = bearerToken(header);
      if (token === undefined) return missing;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          issuer: options.issuer,
          audience: options.audience,
          clockTolerance: options.clockToleranceSec ?? 30,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        const code = (err as { code?: string }).code ?? 'ERR_JWT_INVALID';
        return refuse(code === 'ERR_JWT_EXPIRED' ? 'token expired' : 'token rejected');
      }
      const principal = claimText(payload, principalClaim);
      if (principal === undefined) return refuse(`token has no ${principalClaim} claim`);
      const tenant =
        tenantClaims.map((c) => claimText(payload, c)).find((v) => v !== undefined) ?? options.issuer;
      const auth = { tenant, principal };
      if (operator === undefined) return { ok: true, auth };
      const scope = jwtOperatorScope(payload, operator, tenant);
      return scope === undefined ? { ok: true, auth } : { ok: true, auth, operator: scope };
    },
  };
}

/** OAuth 2.0 Protected Resource Metadata (RFC 9728) for this server. */
export function protectedResourceMetadata(resource: string, issuer: string): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    resource_name: 'durable-mcp',
  };
}
