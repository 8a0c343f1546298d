// The HTTP rules every sign-in request follows: which fetch, which URLs may be plain http (loopback only), and the
// options oauth4webapi takes for them.
import * as oauth from 'oauth4webapi';
import { OAuthFlowError } from './types.js';

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', '::1', 'localhost']);

/** True for an http:// URL on a loopback host: the only place a sign-in may go without TLS. */
export function isLoopbackHttp(url: string | URL): boolean {
  const u = typeof url === 'string' ? new URL(url) : url;
  return u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
}

/** Refuses a URL a sign-in must not use: anything but https, or http on a loopback host. */
export function assertSecureUrl(url: string | URL, what: string): URL {
  let u: URL;
  try {
    u = typeof url === 'string' ? new URL(url) : url;
  } catch {
    throw new OAuthFlowError(`${what} is not a URL`);
  }
  if (u.protocol !== 'https:' && !isLoopbackHttp(u))
    throw new OAuthFlowError(`${what} must be https (or http on a loopback host): ${u.origin}`);
  return u;
}

/** The fetch and signal a sign-in uses. */
export interface HttpContext {
  fetch: typeof fetch;
  signal?: AbortSignal;
}

/** oauth4webapi's per-request options for a request to `url`. */
export function oauthOptions(
  http: HttpContext,
  url: string | undefined,
): { [oauth.customFetch]: typeof fetch; [oauth.allowInsecureRequests]: boolean; signal?: AbortSignal } {
  return {
    [oauth.customFetch]: http.fetch,
    [oauth.allowInsecureRequests]: url !== undefined && isLoopbackHttp(url),
    ...(http.signal === undefined ? {} : { signal: http.signal }),
  };
}

/** A GET of a JSON metadata document; undefined when the server has none there (any 4xx). */
export async function getJson(http: HttpContext, url: string): Promise<Response | undefined> {
  const res = await http.fetch(url, {
    headers: { accept: 'application/json' },
    redirect: 'manual',
    signal: http.signal ?? null,
  });
  if (res.status >= 400 && res.status < 500) {
    await res.body?.cancel();
    return undefined;
  }
  return res;
}
