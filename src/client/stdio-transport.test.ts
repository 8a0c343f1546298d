import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createStdioTransport } from './stdio-transport.js';

// A server that answers every request line with an empty result.
const ECHO = `require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const { id } = JSON.parse(line);
  if (id !== undefined) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result: {} }) + '\\n');
});`;

describe('stdio transport', () => {
  it('removes the abort listener of each request once it is answered', async () => {
    const transport = createStdioTransport(process.execPath, ['-e', ECHO]);
    const shared = new AbortController();
    try {
      for (let id = 1; id <= 15; id++) {
        const reply = await transport.send({ id, method: 'ping', params: {} }, { signal: shared.signal });
        expect(reply.message).toEqual({ jsonrpc: '2.0', id, result: {} });
      }
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
      shared.abort(new Error('stop'));
      await expect(
        transport.send({ id: 99, method: 'ping', params: {} }, { signal: shared.signal }),
      ).rejects.toThrow('stop');
    } finally {
      await transport.close();
    }
  });
});
