// The slowloris phase of the fuzz section: connections that trickle their headers or body, while /healthz and
// tools/list must keep answering.
import { connect, type Socket } from 'node:net';
import { PROTOCOL_VERSION } from '../../../test/support/protocol.js';
import { httpGet, rpc } from '../harness/rpc.js';
import { now, sleep } from '../harness/time.js';
import type { FuzzParams } from '../types.js';
import type { FuzzRun } from './fuzz-run.js';

function openSlowSockets(url: string, n: number): Socket[] {
  const target = new URL(url);
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = connect(Number(target.port), target.hostname);
    s.on('error', () => undefined);
    sockets.push(s);
    const half = i % 2 === 0;
    s.write(
      half
        ? `POST /mcp HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\n`
        : `POST /mcp HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nMcp-Method: tools/list\r\nMCP-Protocol-Version: ${PROTOCOL_VERSION}\r\n\r\n{"jsonrpc":"2.0",`,
    );
  }
  return sockets;
}

export async function slowloris(f: FuzzRun, params: FuzzParams): Promise<void> {
  const { stats, inv } = f;
  const sockets = openSlowSockets(f.url, params.slowSockets);
  stats.slowSockets = sockets.length;
  const slowHealthMs = (stats.slowHealthMs ??= []);
  const slowEnd = now() + params.slowMs;
  let tick = 0;
  while (now() < slowEnd) {
    tick += 1;
    for (const [i, s] of sockets.entries()) {
      if (!s.destroyed) s.write(i % 2 === 0 ? `X-Slow-${tick}: ${'a'.repeat(8)}\r\n` : ' ');
    }
    const [h, list] = await Promise.all([
      httpGet(f.url, '/healthz', { timeoutMs: 5_000 }),
      rpc(f.url, 'tools/list', {}, { timeoutMs: 5_000 }),
    ]);
    slowHealthMs.push(Math.max(h.ms, list.ms));
    inv.expect(
      'slowloris',
      h.status === 200 && list.result !== undefined && h.ms < 2_000 && list.ms < 2_000,
      () =>
        `during slowloris: /healthz ${h.netError ?? h.status} in ${Math.round(h.ms)} ms, tools/list ${list.netError ?? 'ok'} in ${Math.round(list.ms)} ms`,
    );
    await sleep(500);
  }
  stats.slowClosedByServer = sockets.filter((s) => s.destroyed || s.readableEnded).length;
  for (const s of sockets) s.destroy();
}
