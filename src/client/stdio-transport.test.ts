import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { neverSent } from './retry.js';
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

  it('fails a request to a program that cannot be started as never sent, and keeps working', async () => {
    const transport = createStdioTransport('/nonexistent/durable-mcp-test-server');
    try {
      const err: unknown = await transport
        .send({ id: 1, method: 'ping', params: {} })
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'ENOENT' });
      expect(neverSent(err)).toBe(true);
      // Still usable: the next request tries to start the program again (and fails the same way).
      await expect(transport.send({ id: 2, method: 'ping', params: {} })).rejects.toMatchObject({
        code: 'ENOENT',
      });
    } finally {
      await transport.close();
    }
  });

  it('starts a server that exited again on the next request, after the restart delay while it keeps exiting', async () => {
    // Answers one request, then exits.
    const once = `require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
      const { id } = JSON.parse(line);
      process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result: { pid: process.pid } }) + '\\n', () => process.exit(0));
    });`;
    const delays: number[] = [];
    const transport = createStdioTransport(process.execPath, ['-e', once], undefined, {
      restartDelayMs: (exits) => {
        delays.push(exits);
        return 2_000;
      },
    });
    try {
      const first = await transport.send({ id: 1, method: 'ping', params: {} });
      // Until the first process is gone, and a little longer for its exit to be seen.
      const firstPid = (first.message.result as { pid: number }).pid;
      for (let i = 0; i < 200; i++) {
        try {
          process.kill(firstPid, 0);
        } catch {
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      const second = await transport.send({ id: 2, method: 'ping', params: {} });
      // It exited quickly, so the next start waited (2 s from the exit, of which well over 1 s was left).
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
      expect(delays).toEqual([1]);
      expect((second.message.result as { pid: number }).pid).not.toBe(
        (first.message.result as { pid: number }).pid,
      );
    } finally {
      await transport.close();
    }
  });
});
