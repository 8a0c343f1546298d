import { describe, expect, it } from 'vitest';
import { META_IDEMPOTENCY_KEY } from '../wire/meta-keys.js';
import {
  fetchWithRetry,
  isConnectionFailure,
  isSafeToRepeat,
  neverSent,
  retryAfterMs,
  retryDelayMs,
  retryPolicy,
} from './retry.js';

const req = (method: string, meta: Record<string, unknown> = {}) => ({
  id: 1,
  method,
  params: { _meta: meta },
});
const refused = (status: number, headers: Record<string, string> = {}) =>
  new Response('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not ready"}}', {
    status,
    headers,
  });
const connectionError = (code: string) =>
  new TypeError('fetch failed', { cause: Object.assign(new Error(code), { code }) });
const fast = retryPolicy({ baseDelayMs: 1, maxDelayMs: 5 });

/** An attempt function that answers (or throws) from a script, counting its calls. */
function scripted(...steps: Array<Response | Error>): {
  attempt: () => Promise<Response>;
  calls: () => number;
} {
  let n = 0;
  return {
    attempt: async () => {
      const step = steps[Math.min(n++, steps.length - 1)]!;
      if (step instanceof Error) throw step;
      return step;
    },
    calls: () => n,
  };
}

describe('which requests are repeated', () => {
  it('reads, task methods and listen openings are; tools/call only with an idempotency key', () => {
    for (const method of [
      'tasks/get',
      'tasks/cancel',
      'tasks/update',
      'tools/list',
      'resources/read',
      'prompts/get',
    ])
      expect(isSafeToRepeat(req(method))).toBe(true);
    expect(isSafeToRepeat(req('subscriptions/listen'))).toBe(true);
    expect(isSafeToRepeat(req('server/discover'))).toBe(true);
    expect(isSafeToRepeat(req('tools/call'))).toBe(false);
    expect(isSafeToRepeat(req('tools/call', { [META_IDEMPOTENCY_KEY]: 'k-1' }))).toBe(true);
    expect(isSafeToRepeat(req('tools/call', { [META_IDEMPOTENCY_KEY]: 7 }))).toBe(false);
    expect(isSafeToRepeat(req('custom/write'))).toBe(false);
  });

  it('refused and reset connections are failures to retry; other errors are not', () => {
    expect(isConnectionFailure(connectionError('ECONNREFUSED'))).toBe(true);
    expect(isConnectionFailure(connectionError('ECONNRESET'))).toBe(true);
    expect(isConnectionFailure(connectionError('UND_ERR_SOCKET'))).toBe(true);
    expect(isConnectionFailure(new TypeError('fetch failed'))).toBe(false);
    expect(isConnectionFailure(new DOMException('aborted', 'AbortError'))).toBe(false);
    expect(isConnectionFailure(connectionError('ENOTFOUND'))).toBe(false);
  });
});

describe('how long to wait', () => {
  it('reads Retry-After in seconds or as a date', () => {
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs('0')).toBe(0);
    expect(retryAfterMs(' 2 ')).toBe(2_000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 7_000)).toBe(3_000);
    expect(retryAfterMs(new Date(1_000).toUTCString(), 7_000)).toBe(0);
    expect(retryAfterMs('soon')).toBeUndefined();
  });

  it('honours Retry-After up to maxDelayMs, else doubles from baseDelayMs with jitter', () => {
    const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 1_000 })!;
    expect(retryDelayMs(policy, 1, 30_000)).toBe(1_000);
    expect(retryDelayMs(policy, 1, 0)).toBe(0);
    expect(retryDelayMs(policy, 1, undefined, () => 0)).toBe(50);
    expect(retryDelayMs(policy, 1, undefined, () => 1)).toBe(100);
    expect(retryDelayMs(policy, 3, undefined, () => 1)).toBe(400);
    expect(retryDelayMs(policy, 10, undefined, () => 1)).toBe(1_000);
  });

  it('has defaults, and false turns retries off', () => {
    expect(retryPolicy(undefined)).toEqual({
      attempts: 5,
      baseDelayMs: 250,
      maxDelayMs: 5_000,
      maxElapsedMs: 30_000,
    });
    expect(retryPolicy({ attempts: 2 })?.attempts).toBe(2);
    expect(retryPolicy(false)).toBeUndefined();
  });
});

describe('fetchWithRetry', () => {
  it('sends again after 502 and 503 until an answer comes', async () => {
    const s = scripted(refused(503), refused(502), new Response('{}', { status: 200 }));
    expect((await fetchWithRetry(fast, undefined, s.attempt)).status).toBe(200);
    expect(s.calls()).toBe(3);
  });

  it('returns the last refusal once attempts run out, and sends once without a policy', async () => {
    const s = scripted(refused(503));
    expect((await fetchWithRetry(retryPolicy({ ...fast, attempts: 3 }), undefined, s.attempt)).status).toBe(
      503,
    );
    expect(s.calls()).toBe(3);
    const once = scripted(refused(503), new Response('{}'));
    expect((await fetchWithRetry(undefined, undefined, once.attempt)).status).toBe(503);
    expect(once.calls()).toBe(1);
  });

  it('tells a request never sent (refused, unknown host) from one whose answer may be lost (reset)', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'])
      expect(neverSent(connectionError(code))).toBe(true);
    for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'])
      expect(neverSent(connectionError(code))).toBe(false);
    expect(neverSent(new Error('boom'))).toBe(false);
    expect(neverSent(undefined)).toBe(false);
  });

  it('gives up when the next wait would pass maxElapsedMs', async () => {
    const s = scripted(refused(503, { 'retry-after': '1' }));
    const policy = retryPolicy({ attempts: 10, maxDelayMs: 1_000, maxElapsedMs: 500 });
    const started = Date.now();
    expect((await fetchWithRetry(policy, undefined, s.attempt)).status).toBe(503);
    expect(s.calls()).toBe(1);
    expect(Date.now() - started).toBeLessThan(500);
  });

  it('retries refused connections, rethrowing the last; other errors and other statuses go through at once', async () => {
    const s = scripted(connectionError('ECONNREFUSED'));
    await expect(fetchWithRetry(retryPolicy({ ...fast, attempts: 2 }), undefined, s.attempt)).rejects.toThrow(
      'fetch failed',
    );
    expect(s.calls()).toBe(2);
    const other = scripted(new Error('boom'));
    await expect(fetchWithRetry(fast, undefined, other.attempt)).rejects.toThrow('boom');
    expect(other.calls()).toBe(1);
    const served = scripted(new Response('{}', { status: 500 }));
    expect((await fetchWithRetry(fast, undefined, served.attempt)).status).toBe(500);
    expect(served.calls()).toBe(1);
  });

  it('stops waiting when the caller aborts', async () => {
    const s = scripted(refused(503, { 'retry-after': '60' }));
    const caller = new AbortController();
    const policy = retryPolicy({ maxDelayMs: 60_000, maxElapsedMs: 600_000 });
    const started = Date.now();
    const sending = fetchWithRetry(policy, caller.signal, s.attempt);
    setTimeout(() => caller.abort(new Error('caller gave up')), 20);
    await expect(sending).rejects.toThrow('caller gave up');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(s.calls()).toBe(1);
  });
});
