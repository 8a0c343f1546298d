// The clock jumper of the clock sections: sets the wall clock of one process at a time off by the next offset of
// params.offsets, then all back to the truth; TTL probes start half-way.
import { writeFileSync } from 'node:fs';
import { now, sleep } from '../harness/time.js';
import type { Clients } from './clients.js';
import type { Cluster, Slot } from './cluster.js';
import type { CrashRun } from './context.js';

interface Jump {
  slot: number;
  from: number;
  to: number;
  t: number;
}

function jump(slot: Slot, offset: number, jumps: Jump[]): void {
  writeFileSync(slot.clockFile as string, String(offset));
  slot.proc?.child.kill('SIGUSR2');
  jumps.push({ slot: slot.i, from: slot.offset, to: offset, t: now() });
  slot.offset = offset;
}

export async function runJumps(
  run: CrashRun,
  cluster: Cluster,
  clients: Clients,
  chaosStarted: number,
): Promise<void> {
  const { params, rng, stats, scope, inv } = run;
  const planned = params.jumps ?? 0;
  const offsets = params.offsets ?? [];
  const jumps: Jump[] = [];
  stats.jumps = 0;
  stats.maxOffsetMs = Math.max(...offsets.map((o) => Math.abs(o)));
  let midTtlDone = false;
  while (stats.jumps < planned && now() - chaosStarted < params.chaosMs && !scope.closed) {
    await sleep(rng.int(params.gapMinMs, params.gapMaxMs));
    const slot = cluster.slots[stats.jumps % cluster.slots.length] as Slot;
    if (slot.proc === undefined || slot.proc.dead) continue;
    jump(slot, offsets[stats.jumps % offsets.length] as number, jumps);
    stats.jumps += 1;
    // Right after a jump (not before one), so that the creating process's clock is the one the probe will see.
    if (!midTtlDone && stats.jumps >= planned / 2) {
      midTtlDone = true;
      clients.startTtlProbes();
    }
    run.progress?.(`${stats.jumps}/${planned} jumps, ${stats.tasks} tasks`);
  }
  // Every clock back to the truth, as after an NTP correction: the settle phase then needs no slack.
  for (const slot of cluster.slots) {
    if (slot.offset === 0 || slot.proc === undefined || slot.proc.dead) continue;
    jump(slot, 0, jumps);
  }
  stats.jumpList = jumps.map((j) => `${j.slot}:${j.from / 1000}s→${j.to / 1000}s`);
  inv.expect(
    'jumps',
    stats.jumps >= planned,
    `only ${stats.jumps} of ${planned} jumps within ${params.chaosMs} ms`,
  );
}
