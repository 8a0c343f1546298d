// A listen stream's end through DispatchInput.onGone: the acknowledgement first, notifications with the subscription
// id, the listen result when the client goes away, its slot released (no AbortController asked for), and a params
// refusal that releases the slot too.
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../wire/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  META_SUBSCRIPTION_ID,
} from '../wire/meta-keys.js';
import { createMcpServer, type DispatchInput } from './server.js';

const META = { [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} };

function input(id: number, notifications: unknown, sent: [string, JsonObject][]) {
  let gone: (() => void) | undefined;
  let handed = 0;
  const base: DispatchInput = {
    request: {
      kind: 'request',
      id,
      method: 'subscriptions/listen',
      params: { notifications, _meta: META },
    } as never,
    auth: { tenant: 't', principal: 'p' },
    get signal(): AbortSignal {
      throw new Error('the signal was asked for');
    },
    header: undefined,
    emit: (method, params) => void sent.push([method, params]),
    onGone: (fn) => {
      gone = fn;
      return () => {
        gone = undefined;
      };
    },
    handed: () => void handed++,
  };
  return { base, leave: () => gone?.(), handedCount: () => handed, waiting: () => gone !== undefined };
}

describe('subscriptions/listen ending through onGone', () => {
  it('acknowledges, notifies with the subscription id, and answers once the client goes away', async () => {
    const subscriptions: number[] = [];
    const server = createMcpServer({
      info: { name: 't', version: '1' },
      toolSets: [{ tools: [] }],
      maxListensPerPrincipal: 1,
      onSubscription: (d) => void subscriptions.push(d),
    });
    const sent: [string, JsonObject][] = [];
    const first = input(7, { toolsListChanged: true }, sent);
    const outcome = server.dispatch(first.base);
    await new Promise((r) => setImmediate(r));
    expect(sent[0]?.[0]).toBe('notifications/subscriptions/acknowledged');
    expect(first.handedCount()).toBe(1);
    server.control.listChanged('tools');
    first.leave();
    const ended = await outcome;
    expect(ended.ok && ended.result).toMatchObject({
      resultType: 'complete',
      _meta: { [META_SUBSCRIPTION_ID]: 7 },
    });
    expect(sent.map(([m]) => m)).toContain('notifications/tools/list_changed');
    expect(sent.every(([, p]) => (p._meta as JsonObject)[META_SUBSCRIPTION_ID] === 7)).toBe(true);
    expect(first.waiting()).toBe(false);
    expect(subscriptions).toEqual([1, -1]);
    // The slot (one per principal here) is free again; a refused listen releases its own.
    const refused = await server.dispatch(input(8, 'nope', []).base);
    expect(refused.ok).toBe(false);
    const again = input(9, { toolsListChanged: true }, []);
    const open = server.dispatch(again.base);
    await new Promise((r) => setImmediate(r));
    again.leave();
    expect((await open).ok).toBe(true);
    expect(subscriptions).toEqual([1, -1, 1, -1, 1, -1]);
    await server.close();
  });
});
