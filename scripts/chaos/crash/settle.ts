// The settle phase of a crash or clock section: no more kills, jumps or new tasks; every process back; every task
// must end within a bound computed from the lease, the work and the waits.
import { now, sleep } from '../harness/time.js';
import { SWEEP_MS } from './analyse-task.js';
import type { Clients } from './clients.js';
import type { Cluster } from './cluster.js';
import type { CrashRun } from './context.js';

/** How long every task may take to end after the last kill or jump. */
function settleBound(run: CrashRun): number {
  const p = run.params;
  // Each step may also wait out its backoffs (one run per attempt) and a sleep.
  const waitsMs =
    (p.retryRate ?? 0) > 0 || (p.sleepRate ?? 0) > 0
      ? p.stepsMax *
        (((p.failMax as number) + 1) * ((p.backoffMaxMs as number) + p.stepMsMax) + (p.sleepMsMax as number))
      : 0;
  return p.leaseMs + p.stepsMax * p.stepMsMax + waitsMs + 8_000 + 4_000; // + TTL probes
}

/** Waits for every client to be done; returns the time it took. */
export async function settle(
  run: CrashRun,
  cluster: Cluster,
  clients: Clients,
  manager: Promise<void>,
): Promise<number> {
  const { inv, scope } = run;
  cluster.chaosOn = false;
  clients.stopCreating = true;
  await manager;
  await cluster.restoreAll();
  const settleStart = now();
  await clients.adoptOrphans();
  const bound = settleBound(run);
  let settled = false;
  while (now() - settleStart < bound && !scope.closed) {
    if (clients.drivers.size === 0) {
      settled = true;
      break;
    }
    await sleep(50);
  }
  const settleMs = now() - settleStart;
  // tasks/get says "task expired" as soon as the TTL has passed; the row is marked failed by the next sweep.
  const lastExpiredSeen = Math.max(0, ...clients.recs.map((r) => r.expiredSeenAt ?? 0));
  if (settled && lastExpiredSeen > 0)
    await sleep(Math.min(SWEEP_MS + 1_000, lastExpiredSeen + SWEEP_MS + 1_000 - now()));
  if (!settled) {
    const open = clients.recs.filter(
      (r) => r.final === undefined && r.expiredSeenAt === undefined && r.taskId !== undefined,
    );
    inv.fail(
      'stuck',
      `${open.length} tasks not terminal ${bound} ms after the last kill: ${open
        .slice(0, 5)
        .map((r) => `${r.taskId} (${r.history.join('→')})`)
        .join(', ')}`,
    );
  } else inv.ok('stuck');
  return settleMs;
}
