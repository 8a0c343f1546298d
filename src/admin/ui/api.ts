// Calls to the operator API from the page: the operator's bearer token and CSRF token live in this tab's
// sessionStorage only; every failure becomes an ApiError that says plainly what the server answered.
import type { Session } from './types.js';

export const BASE = '/admin/api/v1';
const TOKEN_KEY = 'durable-mcp-admin.token';
export const CSRF_KEY = 'durable-mcp-admin.csrf';
/** The window event a refused token raises (its detail: what the server said). */
export const SIGNED_OUT = 'durable-mcp-admin:signed-out';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** What the page shows: `403 csrf: Missing or invalid X-CSRF-Token`. */
  describe(): string {
    return this.status === 0 ? this.message : `${this.status} ${this.code}: ${this.message}`;
  }
}

export const describeError = (err: unknown): string =>
  err instanceof ApiError ? err.describe() : err instanceof Error ? err.message : String(err);

export const token = (): string | null => sessionStorage.getItem(TOKEN_KEY);

export function authHeaders(): Record<string, string> {
  const t = token();
  return t === null ? {} : { authorization: `Bearer ${t}` };
}

export function forget(): void {
  sessionStorage.removeItem(TOKEN_KEY);
  sessionStorage.removeItem(CSRF_KEY);
}

/**
 * Calls a route (path below /admin/api/v1); a change sends the CSRF token the session gave, if the tab has it, and
 * `body` as JSON (a retry's recorded step).
 */
export async function call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: object): Promise<T> {
  const headers = authHeaders();
  const csrf = sessionStorage.getItem(CSRF_KEY);
  if (method !== 'GET' && csrf !== null) headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`${BASE}${path}`, {
      method,
      headers,
      cache: 'no-store',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (err) {
    throw new ApiError(0, 'network', `The server did not answer (${describeError(err)})`);
  }
  const text = await res.text();
  let answer: unknown;
  try {
    answer = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(res.status, 'bad_response', `Unexpected answer: ${text.slice(0, 200)}`);
  }
  if (!res.ok) {
    const error = (answer as { error?: { code?: string; message?: string } }).error;
    const failure = new ApiError(res.status, error?.code ?? 'error', error?.message ?? res.statusText);
    // The token stopped working (revoked, or the server's keys changed): the tab signs out and says why.
    if (res.status === 401 && path !== '/session')
      window.dispatchEvent(new CustomEvent(SIGNED_OUT, { detail: failure.describe() }));
    throw failure;
  }
  return answer as T;
}

/** Checks a token with GET /session; keeps it (and the CSRF token) for this tab when it is an operator's. */
export async function signIn(candidate: string): Promise<Session> {
  sessionStorage.setItem(TOKEN_KEY, candidate);
  try {
    return await refreshSession();
  } catch (err) {
    forget();
    throw err;
  }
}

/** Who the tab is signed in as, and a fresh CSRF token. */
export async function refreshSession(): Promise<Session> {
  const session = await call<Session>('GET', '/session');
  sessionStorage.setItem(CSRF_KEY, session.csrfToken);
  return session;
}
