// Builds the authenticator chosen by `serve` flags: static tokens, JWT, or anonymous development mode.
import { createAnonymousAuthenticator, type Authenticator } from '../auth/authenticator.js';
import { createJwtAuthenticator, protectedResourceMetadata } from '../auth/jwt.js';
import { createStaticTokenAuthenticator, type StaticTokenAuthenticator } from '../auth/static-tokens.js';
import { UsageError } from './args.js';

export interface AuthFlags {
  auth?: string;
  jwtIssuer?: string;
  jwtAudience?: string;
  jwks?: string;
  jwtTenantClaims?: string;
  jwtPrincipalClaim?: string;
}

export interface AuthSetup {
  authenticator: Authenticator;
  /** RFC 9728 metadata to serve (JWT mode only). */
  metadata: Record<string, unknown> | undefined;
  /** Re-reads credentials (SIGHUP); returns an error message when the new file was refused. */
  reload: (() => string | undefined) | undefined;
  describe: string;
}

export function buildAuth(flags: AuthFlags, resourceUrl: string): AuthSetup {
  const jwtFlags = [flags.jwtIssuer, flags.jwks].filter((v) => v !== undefined).length;
  if (flags.auth !== undefined && jwtFlags > 0)
    throw new UsageError('choose either --auth tokens.json or JWT flags');
  if (flags.auth !== undefined) {
    let auth: StaticTokenAuthenticator;
    try {
      auth = createStaticTokenAuthenticator(flags.auth);
    } catch (err) {
      throw new UsageError(`--auth: ${err instanceof Error ? err.message : String(err)}`);
    }
    return {
      authenticator: auth,
      metadata: undefined,
      reload: () => auth.reload(),
      describe: `static tokens from ${flags.auth}`,
    };
  }
  if (jwtFlags > 0) {
    if (flags.jwtIssuer === undefined || flags.jwks === undefined)
      throw new UsageError('JWT auth needs --jwt-issuer and --jwks');
    const audience = flags.jwtAudience ?? resourceUrl;
    const metadataUrl = `${new URL(resourceUrl).origin}/.well-known/oauth-protected-resource${new URL(resourceUrl).pathname}`;
    let authenticator: Authenticator;
    try {
      authenticator = createJwtAuthenticator({
        issuer: flags.jwtIssuer,
        audience,
        jwks: flags.jwks,
        tenantClaims: flags.jwtTenantClaims
          ?.split(',')
          .map((c) => c.trim())
          .filter(Boolean),
        principalClaim: flags.jwtPrincipalClaim,
        resourceMetadataUrl: metadataUrl,
      });
    } catch (err) {
      throw new UsageError(`--jwks: ${err instanceof Error ? err.message : String(err)}`);
    }
    return {
      authenticator,
      metadata: protectedResourceMetadata(audience, flags.jwtIssuer),
      reload: undefined,
      describe: `JWT access tokens from ${flags.jwtIssuer} for ${audience}`,
    };
  }
  return {
    authenticator: createAnonymousAuthenticator(),
    metadata: undefined,
    reload: undefined,
    describe: 'anonymous development mode — every caller is the same principal; do not expose this server',
  };
}
