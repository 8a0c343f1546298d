// The operator HTTP API (`/admin/api/v1` at the server's origin) as the `durable-mcp admin` commands call it: the
// bearer token of the client commands, a CSRF token from `GET /session` for every action, errors kept apart by status.
import type { ErrorJson, SessionJson } from '../admin/shapes.js';
import { UsageError } from './args.js';
import { serverFromFlags } from './client-flags.js';

/**
 * An answer of the API as read here: the fields its shape names (admin/shapes.ts), each of any value and any of them
 * absent (a server of another version may send less, or other values).
 */
export type Answer<T> = { readonly [K in keyof T]?: unknown };

export const ADMIN_API_PATH = '/admin/api/v1';
const TIMEOUT_MS = 30_000;

/** The server answered with an error status; `code` is the `error.code` of its JSON body, when it has one. */
export class AdminApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'AdminApiError';
  }
}

/** The server could not be reached, or answered with something that is not the API's JSON. */
export class AdminTransportError extends Error {
  override name = 'AdminTransportError';
}

export interface AdminApi {
  /** The API's base URL, for messages. */
  base: string;
  get(path: string, query?: URLSearchParams): Promise<unknown>;
  /** `GET /session`: what an action must carry (its CSRF token, and the session's cookies if it sets any). */
  session(): Promise<ActionProof>;
  /** An action, with the proof of a session fetched just before. */
  /** `body`: sent as JSON (a retry's recorded step). */
  act(proof: ActionProof, method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown>;
}

export interface ActionProof {
  csrfToken: SessionJson['csrfToken'];
  cookie: string;
}

/** The API of the server that --url (or $DURABLE_MCP_URL) names; a URL that is not http(s) is a usage error. */
export function adminApiFromFlags(values: Record<string, unknown>): AdminApi {
  const { url, token } = serverFromFlags(values);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be the server's URL, e.g. http://127.0.0.1:3000/mcp (got "${url}")`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`--url must be an http or https URL (got "${url}")`);
  return createAdminApi(parsed.origin + ADMIN_API_PATH, token);
}

function errorOf(body: unknown): Answer<ErrorJson['error']> | undefined {
  const error = (body as Answer<ErrorJson> | undefined)?.error;
  return typeof error === 'object' && error !== null ? error : undefined;
}

/** `name=value` of each Set-Cookie, for a server that pairs the CSRF token with a cookie. */
const cookiesOf = (res: Response): string =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]?.trim() ?? '')
    .filter((c) => c.includes('='))
    .join('; ');

export function createAdminApi(base: string, token: string | undefined): AdminApi {
  const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };

  async function send(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    payload?: string,
  ): Promise<{ body: unknown; res: Response }> {
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: {
          accept: 'application/json',
          ...auth,
          ...headers,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: payload,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
      const detail = typeof cause?.code === 'string' ? cause.code : cause?.message;
      const why = err instanceof Error ? err.message : String(err);
      throw new AdminTransportError(
        `cannot reach ${base}: ${why}${typeof detail === 'string' ? ` (${detail})` : ''}`,
      );
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const error = errorOf(body);
      const message = typeof error?.message === 'string' ? error.message : text.slice(0, 200).trim();
      throw new AdminApiError(
        res.status,
        typeof error?.code === 'string' ? error.code : undefined,
        message === '' ? res.statusText : message,
      );
    }
    if (body === undefined || typeof body !== 'object')
      throw new AdminTransportError(`the answer to ${method} ${base}${path} is not the operator API's JSON`);
    return { body, res };
  }

  return {
    base,
    async get(path, query) {
      const qs = query === undefined || query.size === 0 ? '' : `?${query.toString()}`;
      return (await send('GET', path + qs)).body;
    },
    async session() {
      const { body, res } = await send('GET', '/session');
      const csrfToken = (body as Answer<SessionJson>).csrfToken;
      if (typeof csrfToken !== 'string')
        throw new AdminTransportError(`the answer to GET ${base}/session carries no csrfToken`);
      return { csrfToken, cookie: cookiesOf(res) };
    },
    async act({ csrfToken, cookie }, method, path, body) {
      const headers = { 'x-csrf-token': csrfToken, ...(cookie === '' ? {} : { cookie }) };
      return (await send(method, path, headers, body === undefined ? undefined : JSON.stringify(body))).body;
    },
  };
}
