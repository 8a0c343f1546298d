// readBody: once a body is read, its listeners leave the request (a stream's request lives for hours), and an error
// the request emits afterwards is no uncaught exception.
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readBody } from './body.js';

describe('readBody', () => {
  it('reads the body, then leaves only a shared error listener on the request', async () => {
    const req = Readable.from([Buffer.from('{"a":'), Buffer.from('1}')], { objectMode: false });
    const budget = { used: 0, max: 1024 };
    const body = await readBody(req as unknown as IncomingMessage, 1024, budget);
    expect(body).toBe('{"a":1}');
    expect(budget.used).toBe(0);
    expect(req.listenerCount('data')).toBe(0);
    expect(req.listenerCount('end')).toBe(0);
    expect(req.listenerCount('error')).toBe(1);
    expect(() => req.emit('error', new Error('reset'))).not.toThrow();
  });

  it('refuses a body over the limit', async () => {
    const req = Readable.from([Buffer.alloc(10), Buffer.alloc(10)], { objectMode: false });
    await expect(readBody(req as unknown as IncomingMessage, 15)).rejects.toThrow(/exceeds 15 bytes/);
  });
});
