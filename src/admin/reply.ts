// How the operator API answers: JSON that no cache keeps, and its error codes with their HTTP statuses.
import type { ServerResponse } from 'node:http';
import type { ErrorJson } from './shapes.js';

/** The error codes of the operator API (`{"error":{"code","message"}}`) and the status each is sent with. */
export const AdminErrorStatus = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  csrf: 403,
  not_found: 404,
  method_not_allowed: 405,
  terminal: 409,
  not_failed: 409,
  not_terminal: 409,
  sealed: 409,
  step_kept: 409,
  conflict: 409,
  gone: 410,
  too_large: 413,
  invalid: 422,
  too_many_requests: 429,
  unavailable: 503,
  internal: 500,
} as const;

export type AdminErrorCode = keyof typeof AdminErrorStatus;

/** Sends a JSON body with `cache-control: no-store` (and any other headers). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Sends `{"error":{"code","message"}}` with the status of its code. */
export function sendError(
  res: ServerResponse,
  code: AdminErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, AdminErrorStatus[code], { error: { code, message } } satisfies ErrorJson, headers);
}

/** What is kept of a client-chosen text in audit lines. */
export const bounded = (text: string): string => (text.length > 100 ? `${text.slice(0, 100)}…` : text);
