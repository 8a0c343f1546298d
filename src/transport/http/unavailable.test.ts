// The endpoint of a starting process: probes answered, everything else 503 with Retry-After and a JSON-RPC error,
// bodies left unread (a connection with a large or unsized one is closed rather than drained).
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { listenHttp, type RunningHttpServer } from './node-server.js';
import { LOOPBACK_HOSTS, type OriginPolicy } from './origin-check.js';
import { createUnavailableHandler } from './unavailable.js';

const servers: RunningHttpServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close(0);
});

async function start(origin?: OriginPolicy): Promise<string> {
  const running = await listenHttp(
    createUnavailableHandler({ reason: 'store unreachable', message: 'Server starting', origin }),
    '127.0.0.1',
    0,
  );
  servers.push(running);
  return `http://127.0.0.1:${running.port}`;
}

describe('createUnavailableHandler', () => {
  it('answers /healthz 200, /readyz 503 with the reason, anything else 503 with a JSON-RPC error', async () => {
    const base = await start();
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, ready.headers.get('retry-after'), await ready.json()]).toEqual([
      503,
      '1',
      { status: 'not ready', reason: 'store unreachable' },
    ]);
    for (const [path, method] of [
      ['/mcp', 'POST'],
      ['/mcp', 'GET'],
      ['/metrics', 'GET'],
    ] as const) {
      const res = await fetch(`${base}${path}`, {
        method,
        body: method === 'POST' ? '{"jsonrpc":"2.0"}' : undefined,
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.headers.get('connection')).not.toBe('close');
      expect(await res.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32603, message: 'Server starting' },
      });
    }
  });

  it('closes the connection of a request whose body it would have to drain (chunked or large)', async () => {
    const base = await start();
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const req = request(`${base}/mcp`, { method: 'POST' }, (res) => {
        res.resume();
        resolve(res.headers);
      });
      req.on('error', reject);
      // Chunked: its size is unknown, so it is not read to keep the connection.
      req.write('{"jsonrpc":');
    });
    expect(headers.connection).toBe('close');
  });

  it('refuses a Host the endpoint would refuse (403) on every route but /healthz', async () => {
    const base = await start({ allowedHosts: LOOPBACK_HOSTS });
    const status = (path: string, host: string): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = request(`${base}${path}`, { headers: { host } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    expect(await status('/readyz', 'evil.example')).toBe(403);
    expect(await status('/mcp', 'evil.example')).toBe(403);
    expect(await status('/healthz', 'evil.example')).toBe(200);
    expect(await status('/readyz', 'localhost')).toBe(503);
  });
});
