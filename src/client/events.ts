// Events from outside a task, sent by its owner (`POST /tasks/{id}/events/{name}` beside the MCP endpoint, with the
// client's credentials): what `client.sendEvent` does.
import type { JsonValue } from '../json.js';
import { authorizationHeader, sendWithAuth } from './auth-retry.js';
import type { ClientAuth } from './oauth/types.js';

/** What came of a delivery the server took: handed to the task's wait, kept for it, or a repeat of an earlier one. */
export type EventOutcome = 'delivered' | 'kept' | 'repeat';

/** A delivery the server refused: its HTTP status and `{"error":{"code","message"}}`. */
export class EventRefusedError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'EventRefusedError';
  }
}

export interface EventSendOptions {
  /** The MCP endpoint's URL; the route is at its origin. */
  url: string;
  token?: string | (() => string | Promise<string>);
  /** A sign-in whose token is sent (and which answers a 401 or an `insufficient_scope` 403). */
  auth?: ClientAuth;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
}

/** The URL of the owner's route for event `name` of task `taskId`, at the origin of the MCP endpoint `url`. */
export const eventUrl = (url: string, taskId: string, name: string): string =>
  new URL(`/tasks/${encodeURIComponent(taskId)}/events/${encodeURIComponent(name)}`, url).href;

/** POSTs the payload to a delivery route (the owner's, or an operator's with its own headers). */
export async function postEvent(
  target: string,
  payload: JsonValue,
  options: Omit<EventSendOptions, 'url'>,
): Promise<EventOutcome> {
  const body = JSON.stringify(payload);
  const attempt = async (): Promise<Response> => {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
    const authorization = await authorizationHeader(options.auth, options.token);
    if (authorization !== undefined) headers.authorization = authorization;
    return (options.fetch ?? fetch)(target, { method: 'POST', headers, body });
  };
  const res = await sendWithAuth(options.auth, attempt);
  const text = await res.text();
  let answer: { outcome?: unknown; error?: { code?: unknown; message?: unknown } } = {};
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    // Not the routes' JSON (a proxy's page): refused with the status alone.
  }
  if (res.ok && (answer.outcome === 'delivered' || answer.outcome === 'kept' || answer.outcome === 'repeat'))
    return answer.outcome;
  const code = typeof answer.error?.code === 'string' ? answer.error.code : `http_${res.status}`;
  const message = typeof answer.error?.message === 'string' ? answer.error.message : `HTTP ${res.status}`;
  throw new EventRefusedError(res.status, code, message);
}
