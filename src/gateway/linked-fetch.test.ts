import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { linkedFetch } from './linked-fetch.js';

/** A fetch that answers `body` and hands the test the signal each request got. */
function fakeFetch(body: string | null) {
  const signals: AbortSignal[] = [];
  const base = (async (_input: unknown, init?: RequestInit) => {
    if (init?.signal) signals.push(init.signal);
    return new Response(body, {
      status: body === null ? 202 : 200,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
  return { base, signals };
}

describe('linkedFetch', () => {
  it('leaves no listener on the shared signal once each response is read, however many requests', async () => {
    const shared = new AbortController();
    const { base, signals } = fakeFetch('{"ok":true}');
    const f = linkedFetch(base);
    const answers = await Promise.all(
      Array.from({ length: 200 }, () => f('http://x/mcp', { signal: shared.signal })),
    );
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(200);
    for (const res of answers) expect(await res.json()).toEqual({ ok: true });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(new Set(signals).size).toBe(200);
    expect(signals.includes(shared.signal)).toBe(false);
  });

  it('releases a response without a body at once', async () => {
    const shared = new AbortController();
    const res = await linkedFetch(fakeFetch(null).base)('http://x/mcp', { signal: shared.signal });
    expect(res.status).toBe(202);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('aborts a request in flight when the shared signal aborts', async () => {
    const shared = new AbortController();
    // A request that answers only when its own signal aborts (as a real fetch rejects then).
    const hanging = ((_input: unknown, init?: RequestInit) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)),
      )) as typeof fetch;
    const pending = linkedFetch(hanging)('http://x/mcp', { signal: shared.signal });
    shared.abort(new Error('closing'));
    await expect(pending).rejects.toThrow('closing');
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('passes the request through untouched without a signal', async () => {
    const { base, signals } = fakeFetch('{}');
    const res = await linkedFetch(base)('http://x/mcp', {});
    expect(await res.json()).toEqual({});
    expect(signals).toHaveLength(0);
  });
});
