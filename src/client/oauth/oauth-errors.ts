// Turns what oauth4webapi or fetch threw into an OAuthFlowError whose message names the step and the server's OAuth
// error code, and never holds a token, code, verifier or secret.
import * as oauth from 'oauth4webapi';
import { OAuthFlowError, SignInRequiredError } from './types.js';

const MAX_DESCRIPTION = 200;

/** `text` with every secret in it replaced. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets)
    if (secret !== undefined && secret.length >= 4) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * An OAuthFlowError for failed step `what`. Only the server's `error` code and (shortened) `error_description`, or
 * the library's own message, are kept; `secrets` are removed from them all the same.
 */
export function toFlowError(
  what: string,
  err: unknown,
  secrets: readonly (string | undefined)[] = [],
): Error {
  if (err instanceof OAuthFlowError || err instanceof SignInRequiredError) return err;
  if (err instanceof oauth.ResponseBodyError || err instanceof oauth.AuthorizationResponseError) {
    const description = err.error_description?.slice(0, MAX_DESCRIPTION);
    const detail = description === undefined ? err.error : `${err.error}: ${description}`;
    return new OAuthFlowError(redact(`${what} (${detail})`, secrets), err.error);
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError)
    return new OAuthFlowError(`${what} (HTTP ${err.status} with a WWW-Authenticate challenge)`);
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) return err;
  const message = err instanceof Error ? err.message : 'unknown error';
  return new OAuthFlowError(redact(`${what} (${message.slice(0, MAX_DESCRIPTION)})`, secrets));
}
