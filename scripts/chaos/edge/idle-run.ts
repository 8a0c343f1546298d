// Section: idle connections. One address (127.0.0.1) keeps more connections open than --max-connections, without
// credentials: half send nothing, half send one GET /healthz and then idle on the kept-alive connection; each is
// opened again shortly after the server closes it. Meanwhile a legitimate client on another address (127.0.0.2)
// sends tools/list and /healthz, each on a new connection. The defences: a connection without a request head is
// closed after --headers-timeout-ms, and at the cap an idle connection yields its place to a new one: of the new
// connection's own address, else of the address holding the most.
import { randomBytes } from 'node:crypto';
import { Invariants } from '../harness/invariants.js';
import { sleep, now } from '../harness/time.js';
import { fmtInt, fmtMs } from '../stats.js';
import type { EdgeParams, SectionContext, SectionResult } from '../types.js';
import { rawConnection, type RawConnection } from '../../../test/support/raw-http.js';
import { killHard } from '../harness/serve.js';
import {
  checkAlive,
  checkService,
  during,
  idleP99,
  IDLE_INVARIANTS,
  startEdgeServer,
  writeTokenFile,
  type EdgeStats,
} from './edge-run.js';

export interface EdgeOptions extends SectionContext {
  params: EdgeParams;
}

/** What the attacker's connections came to. */
interface IdleAttack {
  opened: number;
  open: number;
  peakOpen: number;
  timedOut: number;
  closedQuietly: number;
  keptClosed: number;
  silentLifeMax: number;
}

/** One attacker socket: open, (maybe one request), wait for the server to close it, pause, again. */
async function attackerSlot(
  port: number,
  silent: boolean,
  p: EdgeParams,
  a: IdleAttack,
  running: () => boolean,
  live: Set<RawConnection>,
): Promise<void> {
  while (running()) {
    const c = rawConnection(port, '127.0.0.1');
    live.add(c);
    a.opened += 1;
    const connected = await Promise.race([
      new Promise<boolean>((resolve) => c.socket.once('connect', () => resolve(true))),
      c.closed.then(() => false),
    ]);
    const openedAt = now();
    if (connected) {
      a.open += 1;
      a.peakOpen = Math.max(a.peakOpen, a.open);
      if (!silent)
        c.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n');
    }
    await c.closed;
    live.delete(c);
    if (connected) a.open -= 1;
    if (!running()) return;
    if (c.text().startsWith('HTTP/1.1 408')) a.timedOut += 1;
    else if (silent) a.closedQuietly += 1;
    else a.keptClosed += 1;
    if (silent && connected) a.silentLifeMax = Math.max(a.silentLifeMax, now() - openedAt);
    await sleep(p.reopenMs);
  }
}

async function idleAttack(port: number, p: EdgeParams, running: () => boolean): Promise<IdleAttack> {
  const a: IdleAttack = {
    opened: 0,
    open: 0,
    peakOpen: 0,
    timedOut: 0,
    closedQuietly: 0,
    keptClosed: 0,
    silentLifeMax: 0,
  };
  const live = new Set<RawConnection>();
  const slots = Array.from({ length: p.idleSockets }, (_, i) =>
    attackerSlot(port, i % 2 === 0, p, a, running, live),
  );
  // The slots end once the attack is over and their connection is closed: close what is left.
  while (running()) await sleep(50);
  for (const c of live) c.socket.destroy();
  await Promise.all(slots);
  return a;
}

export async function runIdleConnections(o: EdgeOptions): Promise<SectionResult> {
  const { params: p, scope, progress } = o;
  const inv = Invariants.of(IDLE_INVARIANTS);
  const stats: EdgeStats = {};
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-idle-');
  const token = randomBytes(18).toString('base64url');
  const tokens = writeTokenFile(dir, [{ token, tenant: 'legit', principal: 'client' }]);
  const server = await startEdgeServer(scope, dir, [
    ...['--auth', tokens, '--tools', 'demo'],
    ...['--max-connections', String(p.maxConnections), '--headers-timeout-ms', String(p.headersTimeoutMs)],
  ]);
  try {
    progress?.('idle baseline');
    const idle = await idleP99(server.url, token, p.probeEveryMs);
    progress?.(`${p.idleSockets} idle connections against a cap of ${p.maxConnections}`);
    const port = server.port as number;
    const run = await during(p.attackMs, p.probeEveryMs, server.url, token, (running) =>
      idleAttack(port, p, running),
    );
    checkService(inv, stats, idle, run.probes);
    const a = run.attack;
    Object.assign(stats, {
      attackerOpened: a.opened,
      attackerPeakOpen: a.peakOpen,
      attackerTimedOut: a.timedOut,
      attackerClosedQuietly: a.closedQuietly,
      attackerKeptClosed: a.keptClosed,
      silentLifeMaxMs: a.silentLifeMax,
    });
    inv.expect(
      'saturated',
      a.peakOpen > p.maxConnections,
      `the attacker held at most ${a.peakOpen} connections at once (cap ${p.maxConnections})`,
    );
    const slack = p.headersTimeoutMs + 2_000;
    inv.expect(
      'idle-closed',
      a.silentLifeMax <= slack,
      () => `a connection that sent nothing stayed open ${fmtMs(a.silentLifeMax)} (bound ${fmtMs(slack)})`,
    );
    await checkAlive(inv, server);
  } finally {
    await killHard(server);
  }
  stats.durationMs = now() - started;
  stats.summaryLine =
    `${fmtInt(stats.attackerOpened ?? 0)} idle connections opened (peak ${stats.attackerPeakOpen} against a cap of ${p.maxConnections}; ` +
    `${fmtInt(stats.attackerTimedOut ?? 0)} timed out, ${fmtInt(stats.attackerClosedQuietly ?? 0)} silent and ${fmtInt(stats.attackerKeptClosed ?? 0)} kept-alive ones closed to make room), ` +
    `legitimate client ${fmtInt((stats.legitRequests ?? 0) - (stats.legitFailures ?? 0))}/${fmtInt(stats.legitRequests ?? 0)} served, ` +
    `p99 ${fmtMs(stats.attackP99Ms)} (idle ${fmtMs(stats.idleP99Ms)})`;
  return { inv, stats };
}
