// Builds the authenticator chosen by `serve` flags: static tokens, JWT, or anonymous development mode.
import { createAnonymousAuthenticator, type Authenticator } from '../auth/authenticator.js';
import { createJwtAuthenticator, protectedResourceMetadata, type JwtOperatorOptions } from '../auth/jwt.js';
import { createStaticTokenAuthenticator, type StaticTokenAuthenticator } from '../auth/static-tokens.js';
import { UsageError } from './args.js';

export interface AuthFlags {
  auth?: string;
  jwtIssuer?: string;
  jwtAudience?: string;
  jwks?: string;
  jwtTenantClaims?: string;
  jwtPrincipalClaim?: string;
  /** Which JWTs are operators' (`--jwt-operator-*`). */
  jwtOperator?: JwtOperatorOptions;
  /** `--dev-operator`: the anonymous caller is an operator of every tenant. */
  devOperator?: boolean;
}

type FlagValues = Record<string, string | boolean | undefined>;

/** `--jwt-operator-*`: checked at once, so a mistake is a usage error before anything is opened. */
function jwtOperatorFrom(values: FlagValues): JwtOperatorOptions | undefined {
  const scope = values['jwt-operator-scope'] as string | undefined;
  const claimFlag = values['jwt-operator-claim'] as string | undefined;
  const tenantsClaim = values['jwt-operator-tenants-claim'] as string | undefined;
  if (scope === undefined && claimFlag === undefined) {
    if (tenantsClaim !== undefined)
      throw new UsageError('--jwt-operator-tenants-claim needs --jwt-operator-scope or --jwt-operator-claim');
    return undefined;
  }
  if (scope !== undefined && !/^[\x21-\x7e]+$/.test(scope))
    throw new UsageError('--jwt-operator-scope must be one scope, without spaces');
  let claim: JwtOperatorOptions['claim'];
  if (claimFlag !== undefined) {
    const at = claimFlag.indexOf('=');
    if (at <= 0 || at === claimFlag.length - 1)
      throw new UsageError('--jwt-operator-claim must be NAME=VALUE, e.g. roles=operator');
    claim = { name: claimFlag.slice(0, at), value: claimFlag.slice(at + 1) };
  }
  if (tenantsClaim === '') throw new UsageError('--jwt-operator-tenants-claim needs a claim name');
  return { scope, claim, tenantsClaim };
}

/** The authentication flags of `serve`, with the operator-role flags checked against the mode they belong to. */
export function authFlagsFrom(values: FlagValues): AuthFlags {
  const flags: AuthFlags = {
    auth: values.auth as string | undefined,
    jwtIssuer: values['jwt-issuer'] as string | undefined,
    jwtAudience: values['jwt-audience'] as string | undefined,
    jwks: values.jwks as string | undefined,
    jwtTenantClaims: values['jwt-tenant-claims'] as string | undefined,
    jwtPrincipalClaim: values['jwt-principal-claim'] as string | undefined,
    jwtOperator: jwtOperatorFrom(values),
    devOperator: values['dev-operator'] === true,
  };
  const jwt = flags.jwtIssuer !== undefined || flags.jwks !== undefined;
  if (flags.jwtOperator !== undefined && !jwt)
    throw new UsageError(
      flags.auth === undefined
        ? '--jwt-operator-* flags need JWT auth (--jwt-issuer, --jwks)'
        : '--jwt-operator-* flags are for JWT auth; with --auth grant the role in tokens.json ("roles": ["operator"])',
    );
  if (flags.devOperator === true && (jwt || flags.auth !== undefined))
    throw new UsageError(
      '--dev-operator is for anonymous development mode; grant the operator role in tokens.json or with --jwt-operator-*',
    );
  return flags;
}

export interface AuthSetup {
  authenticator: Authenticator;
  /** RFC 9728 metadata to serve (JWT mode only). */
  metadata: Record<string, unknown> | undefined;
  /** Re-reads credentials (SIGHUP); returns an error message when the new file was refused. */
  reload: (() => string | undefined) | undefined;
  describe: string;
  /**
   * Whether the authenticator can grant the operator role (a token file with an operator entry at start, JWT
   * operator flags, --dev-operator): the operator API is served only then.
   */
  operators: boolean;
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
      operators: auth.grantsOperators(),
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
        operator: flags.jwtOperator,
      });
    } catch (err) {
      throw new UsageError(`--jwks: ${err instanceof Error ? err.message : String(err)}`);
    }
    return {
      authenticator,
      metadata: protectedResourceMetadata(audience, flags.jwtIssuer),
      reload: undefined,
      describe: `JWT access tokens from ${flags.jwtIssuer} for ${audience}${operatorNote(flags.jwtOperator)}`,
      operators: flags.jwtOperator !== undefined,
    };
  }
  const dev = flags.devOperator === true;
  return {
    authenticator: createAnonymousAuthenticator(dev ? { operator: { tenants: 'all' } } : {}),
    metadata: undefined,
    reload: undefined,
    describe: `anonymous development mode — every caller is the same principal${dev ? ', an operator of every tenant' : ''}; do not expose this server`,
    operators: dev,
  };
}

/** How the log line at start names the JWT operator grant. */
function operatorNote(operator: JwtOperatorOptions | undefined): string {
  if (operator === undefined) return '';
  const by = [
    operator.scope === undefined ? undefined : `scope ${operator.scope}`,
    operator.claim === undefined ? undefined : `claim ${operator.claim.name}=${operator.claim.value}`,
  ].filter((v) => v !== undefined);
  const tenants =
    operator.tenantsClaim === undefined ? 'own tenant' : `tenants from claim ${operator.tenantsClaim}`;
  return `; operators by ${by.join(' or ')} (${tenants})`;
}
