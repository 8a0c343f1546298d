// What /proc tells about a process (Linux; undefined elsewhere): CPU time, bytes written, open descriptors,
// and how long this process has waited for a core.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Target } from '../types.js';

const CLOCK_TICKS = (() => {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(out.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** User + system CPU time of a process in ms, from /proc (Linux); undefined elsewhere. */
function processCpuMs(pid: number | undefined): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** CPU time of all the target's processes (replicas), in ms. */
export function targetCpuMs(target: Target): number | undefined {
  let total = 0;
  for (const child of target.children) {
    const ms = processCpuMs(child.pid);
    if (ms === undefined) return undefined;
    total += ms;
  }
  return total;
}

/**
 * Bytes the target's processes (all replicas) have had written to disk so far (Linux: `write_bytes` of
 * /proc/<pid>/io, which counts a SQLite store's WAL appends and checkpoints); undefined elsewhere. Where fsyncs
 * bound creation, what a task costs on disk explains its rate.
 */
export function targetWrittenBytes(target: Target): number | undefined {
  let total = 0;
  for (const child of target.children) {
    try {
      total += Number(/^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${child.pid}/io`, 'utf8'))![1]);
    } catch {
      return undefined;
    }
  }
  return total;
}

/** Open file descriptors of a process (Linux); undefined elsewhere. */
export function openFds(pid: number | undefined): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/**
 * How long this process has waited for a core so far, in ms (Linux: the second field of /proc/self/schedstat,
 * its run-queue time); undefined where that file does not exist.
 */
export function runQueueWaitMs(): number | undefined {
  try {
    return Number(readFileSync('/proc/self/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return undefined;
  }
}
