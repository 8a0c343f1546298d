import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OAuthFlowError, SignInRequiredError } from '../client/oauth/types.js';
import { UpstreamNotSentError } from '../gateway/upstream.js';
import { UsageError } from './args.js';
import { unusableSignIn, upstreamAuthSetting } from './upstream-auth.js';

const UPSTREAM = 'https://tools.example/mcp';
const ENV = { GW_SECRET: 's3cret', EMPTY: '', XDG_CONFIG_HOME: '/cfg' };

/** The usage error's message for `values`, failing the test when they are accepted. */
function refused(values: Record<string, string | boolean>): string {
  try {
    upstreamAuthSetting({ upstream: UPSTREAM, ...values }, ENV);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('the upstream sign-in flags', () => {
  it('read client credentials, the secret from the environment variable named', () => {
    expect(
      upstreamAuthSetting(
        { upstream: UPSTREAM, 'upstream-client-id': ' gw ', 'upstream-client-secret-env': 'GW_SECRET' },
        ENV,
      ),
    ).toEqual({ kind: 'client-credentials', clientId: 'gw', clientSecret: 's3cret' });
  });

  it("read the stored sign-in's token file from the environment", () => {
    expect(upstreamAuthSetting({ upstream: UPSTREAM, 'upstream-sign-in': true }, ENV)).toEqual({
      kind: 'sign-in',
      tokenFile: join('/cfg', 'durable-mcp', 'tokens.json'),
    });
    expect(
      upstreamAuthSetting(
        { upstream: UPSTREAM, 'upstream-sign-in': true },
        { DURABLE_MCP_TOKEN_FILE: '/t/gw.json' },
      ),
    ).toEqual({ kind: 'sign-in', tokenFile: '/t/gw.json' });
  });

  it('ask for nothing when none is given', () => {
    expect(upstreamAuthSetting({ upstream: UPSTREAM, 'upstream-token-env': 'X' }, ENV)).toBeUndefined();
  });

  it('refuse a client without its secret, a secret without its client, and an unset secret', () => {
    expect(refused({ 'upstream-client-id': 'gw' })).toMatch(/needs --upstream-client-secret-env VAR/);
    expect(refused({ 'upstream-client-secret-env': 'GW_SECRET' })).toMatch(/goes with --upstream-client-id/);
    expect(refused({ 'upstream-client-id': 'gw', 'upstream-client-secret-env': 'UNSET_ONE' })).toMatch(
      /UNSET_ONE is not set/,
    );
    expect(refused({ 'upstream-client-id': 'gw', 'upstream-client-secret-env': 'EMPTY' })).toMatch(
      /EMPTY is not set/,
    );
  });

  it('refuse two ways of giving the credentials at once, and a stdio upstream', () => {
    const clientCredentials = { 'upstream-client-id': 'gw', 'upstream-client-secret-env': 'GW_SECRET' };
    expect(refused({ ...clientCredentials, 'upstream-sign-in': true })).toMatch(/not both/);
    for (const flag of ['upstream-token-env', 'upstream-token-file', 'upstream-tenant-tokens']) {
      expect(refused({ ...clientCredentials, [flag]: 'x' })).toContain(`--upstream-client-id or --${flag}`);
      expect(refused({ 'upstream-sign-in': true, [flag]: 'x' })).toContain(`--upstream-sign-in or --${flag}`);
    }
    expect(refused({ upstream: 'stdio:node s.js', 'upstream-sign-in': true })).toMatch(
      /for an HTTP upstream, not a stdio one/,
    );
  });

  it('never put the secret in a message', () => {
    const message = refused({
      'upstream-client-id': 'gw',
      'upstream-client-secret-env': 'GW_SECRET',
      'upstream-token-file': 'x',
    });
    expect(message).not.toContain('s3cret');
  });
});

describe('unusableSignIn', () => {
  const signIn = { kind: 'sign-in', tokenFile: '/t/gw.json' } as const;
  const notSent = (cause: Error) => new UpstreamNotSentError(cause.message, { cause });

  it('says what to run and where the sign-in was looked for, for a sign-in that is missing or refused', () => {
    const missing = unusableSignIn(notSent(new SignInRequiredError(UPSTREAM)), signIn, UPSTREAM);
    expect(missing).toBeInstanceOf(SignInRequiredError);
    expect(missing?.message).toContain(`"durable-mcp login --url ${UPSTREAM}"`);
    expect(missing?.message).toContain('/t/gw.json');
    const refusedRefresh = unusableSignIn(
      new OAuthFlowError('refresh refused', 'invalid_grant'),
      signIn,
      UPSTREAM,
    );
    expect(refusedRefresh?.message).toContain('(refresh refused)');
  });

  it('leaves any other failure, and client credentials, to the usual message', () => {
    expect(unusableSignIn(new Error('ECONNREFUSED'), signIn, UPSTREAM)).toBeUndefined();
    const clientCredentials = { kind: 'client-credentials', clientId: 'gw', clientSecret: 's' } as const;
    expect(unusableSignIn(new SignInRequiredError(UPSTREAM), clientCredentials, UPSTREAM)).toBeUndefined();
  });
});
