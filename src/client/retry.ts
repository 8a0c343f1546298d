// Sending a request again when a balancer or a restarting server turned it away (HTTP 502/503, or a connection
// refused or reset before any response): only requests that are safe to repeat, with back-off, bounded.
import { isJsonObject } from '../wire/jsonrpc.js';
import { META_IDEMPOTENCY_KEY } from '../wire/meta-keys.js';
import { traitsOf } from '../wire/method-traits.js';
import { ProtocolError } from '../wire/protocol-error.js';
import type { OutgoingRequest } from './transport.js';
import { backoffMs } from '../pacing/backoff.js';
import { delay } from './wait.js';

/**
 * When the HTTP transport sends a request again: after HTTP 502 or 503 (a balancer with no ready replica, a server
 * starting or draining, a full request budget) or a connection refused or reset before any response, as happens
 * during a rolling restart. `Retry-After` is honoured (up to `maxDelayMs`); otherwise the waits double from
 * `baseDelayMs`, with jitter. The last answer (or error) is the caller's once attempts or time run out.
 *
 * Only requests that are safe to repeat are sent again: `tasks/get`, `tasks/cancel`, `tasks/update` (answers to keys
 * already answered are ignored), `server/discover`, `tools/list`, `prompts/list`, `prompts/get`, `resources/list`,
 * `resources/templates/list`, `resources/read`, `completion/complete`, `ping`, the opening of `subscriptions/listen`
 * (never a stream that broke after it opened), and `tools/call` when it carries an idempotency key (the server gives
 * a repeat of a task-creating call the task the first one created). A `tools/call` without a key is never repeated.
 */
export interface RetryOptions {
  /** Attempts in all, the first included (default 5). */
  attempts?: number;
  /** The wait before the first retry, doubled for each next one, with jitter (default 250 ms). */
  baseDelayMs?: number;
  /** The longest wait between two attempts; a longer `Retry-After` is cut to it (default 5,000 ms). */
  maxDelayMs?: number;
  /** No attempt starts later than this after the first one (default 30,000 ms). */
  maxElapsedMs?: number;
}

const DEFAULTS: Required<RetryOptions> = {
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 5_000,
  maxElapsedMs: 30_000,
};

/** Statuses that say the request never reached a server able to answer it. */
const RETRY_STATUSES: ReadonlySet<number> = new Set([502, 503]);

/** Connection failures before any response (`fetch` puts the socket error in `cause`). */
const CONNECTION_FAILURES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
]);

/**
 * Whether a JSON-RPC error came with a status saying no server able to answer saw the request (a balancer's or a
 * starting or draining server's 502/503, after the transport's own retries): the same call may succeed later.
 */
export const turnedAway = (err: unknown): boolean =>
  err instanceof ProtocolError && err.httpStatus !== undefined && RETRY_STATUSES.has(err.httpStatus);

/** The policy with its defaults filled in; undefined when retries are off. */
export function retryPolicy(options: RetryOptions | false | undefined): Required<RetryOptions> | undefined {
  if (options === false) return undefined;
  return { ...DEFAULTS, ...options };
}

/** Whether sending the request twice is as good as sending it once (`repeat` in the method traits). */
export function isSafeToRepeat(request: OutgoingRequest): boolean {
  const repeat = traitsOf(request.method)?.repeat;
  if (repeat === 'always') return true;
  const meta = request.params._meta;
  return repeat === 'keyed' && isJsonObject(meta) && typeof meta[META_IDEMPOTENCY_KEY] === 'string';
}

/**
 * The first of `codes` found on an error or along its `cause`s (`fetch` puts the socket error there), or undefined.
 */
export function failureCode(err: unknown, codes: { has(code: string): boolean }): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && codes.has(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether `fetch` failed because the connection was refused or reset before any response. */
export const isConnectionFailure = (err: unknown): boolean =>
  failureCode(err, CONNECTION_FAILURES) !== undefined;

/**
 * Failures that happen before a request is sent, so no server saw it and no answer was lost: a connection refused or
 * a host not found (HTTP), a stdio server's program that could not be started (ENOENT, EACCES).
 */
const NOT_SENT: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOENT',
  'EACCES',
]);

/** Whether a request failed before it was sent (a refused connection, an unknown host, a program not found). */
export const neverSent = (err: unknown): boolean => failureCode(err, NOT_SENT) !== undefined;

/** A `Retry-After` value (seconds or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `retry` (1 for the first): the server's `Retry-After`, else back-off with jitter. */
export function retryDelayMs(
  policy: Required<RetryOptions>,
  retry: number,
  retryAfter: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, policy.maxDelayMs);
  return backoffMs(retry - 1, policy.baseDelayMs, policy.maxDelayMs, random);
}

/**
 * Runs `attempt` (one `fetch`) until it gets an answer other than 502/503, or fails other than by a refused or reset
 * connection, or the policy runs out; then the last answer is returned or the last error thrown. The bodies of
 * answers not returned are discarded.
 */
export async function fetchWithRetry(
  policy: Required<RetryOptions> | undefined,
  signal: AbortSignal | undefined,
  attempt: () => Promise<Response>,
): Promise<Response> {
  const started = Date.now();
  for (let n = 1; ; n++) {
    let response: Response | undefined;
    let failure: unknown;
    try {
      response = await attempt();
      if (!RETRY_STATUSES.has(response.status)) return response;
    } catch (err) {
      if (!isConnectionFailure(err)) throw err;
      failure = err;
    }
    const wait =
      policy === undefined
        ? 0
        : retryDelayMs(policy, n, retryAfterMs(response?.headers.get('retry-after') ?? null));
    const spent =
      policy === undefined || n >= policy.attempts || Date.now() - started + wait > policy.maxElapsedMs;
    if (spent || signal?.aborted === true) {
      if (response !== undefined) return response;
      throw failure;
    }
    await response?.body?.cancel().catch(() => undefined);
    await delay(wait, signal);
    signal?.throwIfAborted();
  }
}
