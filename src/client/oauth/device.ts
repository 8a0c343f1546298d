// The device authorization grant (RFC 8628) for a host without a browser: the person is shown a URL and a code to
// enter on any device, while the token endpoint is polled (at the server's interval, slower when it says slow_down)
// until they approve, refuse, or the code expires.
import * as oauth from 'oauth4webapi';
import { oauthOptions } from './http.js';
import { toFlowError } from './oauth-errors.js';
import { clientAuthOf, toOauthClient, toTokenSet, type TokenRequestContext } from './tokens.js';
import { OAuthFlowError, type DeviceAuthorizationPrompt, type OAuthTokenSet } from './types.js';

/** Waits `ms`, or rejects when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function startDeviceAuthorization(ctx: TokenRequestContext, scope: string | undefined) {
  const client = toOauthClient(ctx.client);
  const parameters: Record<string, string> = { resource: ctx.resource };
  if (scope !== undefined) parameters.scope = scope;
  try {
    const res = await oauth.deviceAuthorizationRequest(
      ctx.as,
      client,
      clientAuthOf(ctx.client, ctx.privateKey),
      parameters,
      oauthOptions(ctx.http, ctx.as.device_authorization_endpoint),
    );
    return await oauth.processDeviceAuthorizationResponse(ctx.as, client, res);
  } catch (err) {
    throw toFlowError('the device authorization request failed', err, [ctx.client.clientSecret]);
  }
}

/** Signs in by the device grant: `show` tells the person where to go; resolves once they approved. */
export async function authorizeWithDevice(
  ctx: TokenRequestContext,
  show: (prompt: DeviceAuthorizationPrompt) => void | Promise<void>,
  scope: string | undefined,
): Promise<OAuthTokenSet> {
  const started = await startDeviceAuthorization(ctx, scope);
  await show({
    verificationUri: started.verification_uri,
    ...(started.verification_uri_complete === undefined
      ? {}
      : { verificationUriComplete: started.verification_uri_complete }),
    userCode: started.user_code,
    expiresInSeconds: started.expires_in,
  });
  const client = toOauthClient(ctx.client);
  const options = {
    ...oauthOptions(ctx.http, ctx.as.token_endpoint),
    additionalParameters: { resource: ctx.resource },
  };
  let intervalMs = (started.interval ?? 5) * 1000;
  const deadline = Date.now() + started.expires_in * 1000;
  while (Date.now() + intervalMs <= deadline) {
    await sleep(intervalMs, ctx.http.signal);
    try {
      const res = await oauth.deviceCodeGrantRequest(
        ctx.as,
        client,
        clientAuthOf(ctx.client, ctx.privateKey),
        started.device_code,
        options,
      );
      const body = await oauth.processDeviceCodeResponse(ctx.as, client, res);
      return toTokenSet(body, ctx.now(), scope);
    } catch (err) {
      if (err instanceof oauth.ResponseBodyError && err.error === 'authorization_pending') continue;
      if (err instanceof oauth.ResponseBodyError && err.error === 'slow_down') {
        intervalMs += 5000;
        continue;
      }
      throw toFlowError('the device authorization failed', err, [
        started.device_code,
        ctx.client.clientSecret,
      ]);
    }
  }
  throw new OAuthFlowError('the device authorization expired before it was approved', 'expired_token');
}
