// Counting a process's open sockets (the memory row's check that the server closed its streams), on this process.
import { openSync, closeSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openSockets } from './proc-stats.js';

const linux = process.platform === 'linux';

describe.runIf(linux)('openSockets', () => {
  it('counts sockets opened and closed, and not the files a process opens', async () => {
    const before = openSockets(process.pid) as number;
    expect(before).toBeGreaterThanOrEqual(0);
    const file = openSync(new URL(import.meta.url), 'r');
    try {
      expect(openSockets(process.pid)).toBe(before);
    } finally {
      closeSync(file);
    }
    const server: Server = createServer();
    const accepted: Socket[] = [];
    server.on('connection', (s) => accepted.push(s));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const client = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The listening socket, the client's end and the accepted end.
    const during = openSockets(process.pid) as number;
    expect(during - before).toBe(3);
    client.destroy();
    for (const s of accepted) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(during - (openSockets(process.pid) as number)).toBe(3);
  });

  it('is undefined for a process that does not exist', () => {
    expect(openSockets(2 ** 30)).toBeUndefined();
  });
});
