// Server→client requests of legacy sessions: answered in the asking process or, through the pending-request
// store, from another replica; every request is opened before it is sent and closed however it ends.
import { describe, expect, it } from 'vitest';
import type { PendingRequestStore, RequestAnswer } from '../tasks/sessions.js';
import type { JsonObject } from '../tasks/task.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { createClientRequests } from './client-requests.js';

/** A pending-request store in memory that records what was asked of it. */
function recordingStore() {
  const open = new Map<string, { origin: string; answer?: JsonObject }>();
  const calls: string[] = [];
  const key = (s: string, r: string) => `${s} ${r}`;
  const store: PendingRequestStore = {
    async openRequest(sessionId, requestId, origin) {
      calls.push(`open ${requestId}`);
      open.set(key(sessionId, requestId), { origin });
    },
    async answerRequest(sessionId, requestId, message) {
      calls.push(`answer ${requestId}`);
      const entry = open.get(key(sessionId, requestId));
      if (entry === undefined || entry.answer !== undefined) return false;
      entry.answer = message;
      return true;
    },
    async answersFor(origin) {
      calls.push('poll');
      const out: RequestAnswer[] = [];
      for (const [k, entry] of open) {
        const [sessionId, requestId] = k.split(' ') as [string, string];
        if (entry.origin === origin && entry.answer !== undefined) {
          out.push({ sessionId, requestId, message: entry.answer });
        }
      }
      return out;
    },
    async closeRequest(sessionId, requestId) {
      calls.push(`close ${requestId}`);
      open.delete(key(sessionId, requestId));
    },
  };
  return { store, calls, open };
}

/** Asks once on session `s1`, capturing the request sent; resolves with what was sent and the pending answer. */
async function askOne(
  requests: ReturnType<typeof createClientRequests>,
  signal = new AbortController().signal,
) {
  let sent: { id: string; method: string } | undefined;
  const answer = requests.ask(
    's1',
    (json) => (sent = JSON.parse(json) as { id: string; method: string }),
    'elicitation/create',
    { message: 'ok?' },
    signal,
  );
  for (let i = 0; i < 50 && sent === undefined; i++) await new Promise((r) => setTimeout(r, 1));
  if (sent === undefined) throw new Error('nothing was sent');
  return { sent, answer };
}

describe('legacy server→client requests', () => {
  it('opens the request before sending it and closes it once answered in this process', async () => {
    const { store, calls, open } = recordingStore();
    const requests = createClientRequests({ store, pollMs: 5 });
    const { sent, answer } = await askOne(requests);
    expect(sent.method).toBe('elicitation/create');
    expect(sent.id).toMatch(/^srv-[A-Za-z0-9_-]{16}$/);
    expect(calls[0]).toBe(`open ${sent.id}`);
    expect(await requests.answer('s1', { jsonrpc: '2.0', id: sent.id, result: { action: 'accept' } })).toBe(
      true,
    );
    await expect(answer).resolves.toEqual({ action: 'accept' });
    expect(calls).toContain(`close ${sent.id}`);
    expect(open.size).toBe(0);
    // Answered here: the store was never asked to keep it.
    expect(calls).not.toContain(`answer ${sent.id}`);
  });

  it('collects an answer another replica kept in the store, and stops polling once nothing waits', async () => {
    const { store, calls } = recordingStore();
    const requests = createClientRequests({ store, pollMs: 5 });
    const { sent, answer } = await askOne(requests);
    // What another replica does with the answer it received: keep it on the open request.
    expect(await store.answerRequest('s1', sent.id, { jsonrpc: '2.0', id: sent.id, result: { n: 1 } })).toBe(
      true,
    );
    await expect(answer).resolves.toEqual({ n: 1 });
    const polls = calls.filter((c) => c === 'poll').length;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls.filter((c) => c === 'poll').length).toBe(polls);
  });

  it('keeps an answer for the replica that asked when this process is not waiting for it', async () => {
    const { store, calls } = recordingStore();
    const asker = createClientRequests({ store, pollMs: 5 });
    const other = createClientRequests({ store, pollMs: 5 });
    const { sent, answer } = await askOne(asker);
    const refusal = { jsonrpc: '2.0', id: sent.id, error: { code: -32042, message: 'closed the dialog' } };
    expect(await other.answer('s1', refusal)).toBe(true);
    await expect(answer).rejects.toEqual(new ProtocolError(-32042, 'closed the dialog'));
    expect(calls).toContain(`close ${sent.id}`);
    // A second answer to the same request, and answers to requests nobody opened, are not kept.
    expect(await other.answer('s1', { jsonrpc: '2.0', id: sent.id, result: {} })).toBe(false);
    expect(await other.answer('s1', { jsonrpc: '2.0', id: 'srv-AAAAAAAAAAAAAAAA', result: {} })).toBe(false);
  });

  it('ignores answers whose id is not one it sends, without touching the store', async () => {
    const { store, calls } = recordingStore();
    const requests = createClientRequests({ store });
    for (const id of ['srv-1', 7, 'task-input:abc', 'srv-AAAA/AAAAAAAAAAA', null]) {
      expect(await requests.answer('s1', { jsonrpc: '2.0', id, result: {} })).toBe(false);
    }
    expect(await requests.answer('s1', 'not a message')).toBe(false);
    expect(calls).toEqual([]);
  });

  it('closes the request when the call is aborted or no answer comes in time', async () => {
    const { store, calls, open } = recordingStore();
    const aborting = new AbortController();
    const first = await askOne(createClientRequests({ store }), aborting.signal);
    aborting.abort();
    await expect(first.answer).rejects.toThrow('request aborted');
    expect(calls).toContain(`close ${first.sent.id}`);
    const second = await askOne(createClientRequests({ store, timeoutMs: 20 }));
    await expect(second.answer).rejects.toThrow('no answer to elicitation/create in time');
    expect(calls).toContain(`close ${second.sent.id}`);
    expect(open.size).toBe(0);
  });

  it('answers in the asking process without a store (one replica)', async () => {
    const requests = createClientRequests();
    const { sent, answer } = await askOne(requests);
    expect(await requests.answer('s1', { jsonrpc: '2.0', id: sent.id, result: { ok: true } })).toBe(true);
    await expect(answer).resolves.toEqual({ ok: true });
    expect(await requests.answer('s1', { jsonrpc: '2.0', id: sent.id, result: { ok: true } })).toBe(false);
  });
});
