// Open subscriptions/listen streams share one listener on the server's shutdown signal: many of them at once raise no
// MaxListenersExceededWarning (a non-JSON line in a JSON log), and all of them end when the server closes.
import { afterEach, describe, expect, it } from 'vitest';
import {
  LATEST_PROTOCOL_VERSION,
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
} from '../wire/meta-keys.js';
import { createMcpServer } from './server.js';

const warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('subscriptions/listen', () => {
  it('opens 100 streams at once without a listener warning, and ends them all on close', async () => {
    process.on('warning', onWarning);
    const server = createMcpServer({ info: { name: 't', version: '1' }, toolSets: [{ tools: [] }] });
    const streams = Array.from({ length: 100 }, (_, i) =>
      server.dispatch({
        request: {
          kind: 'request',
          id: i,
          method: 'subscriptions/listen',
          params: {
            notifications: { toolsListChanged: true },
            _meta: { [META_PROTOCOL_VERSION]: LATEST_PROTOCOL_VERSION, [META_CLIENT_CAPABILITIES]: {} },
          },
        },
        auth: { tenant: 't', principal: 'p' },
        signal: new AbortController().signal,
        header: undefined,
        emit: () => undefined,
      }),
    );
    await new Promise((r) => setTimeout(r, 50));
    await server.close();
    const ended = await Promise.all(streams);
    expect(ended.every((o) => o.ok)).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
