// What /proc tells about a process (Linux; undefined elsewhere): CPU time, bytes written, open descriptors,
// and how long this process has waited for a core.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import type { Target } from '../types.js';

export const CLOCK_TICKS = (() => {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(out.stdout?.trim());
  return Number.isInteger(n) && n > 0 ? n : 100;
})();

/** What /proc/<pid>/stat says of a process: its name, parent, and CPU ticks (its own, and its reaped children's). */
export interface PidStat {
  comm: string;
  ppid: number;
  /** utime + stime (fields 14–15), in clock ticks. */
  ticks: number;
  /** cutime + cstime (fields 16–17): the CPU of the children it has waited for, in clock ticks. */
  childTicks: number;
}

/**
 * Parses /proc/<pid>/stat. The name (field 2) is in parentheses and may hold spaces or parentheses itself, so the
 * fields are counted from the last `)`: after it come field 3 (state), 4 (ppid), … 14 (utime), 15 (stime), 16
 * (cutime), 17 (cstime). Undefined for text of another shape.
 */
export function parsePidStat(text: string): PidStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const n = (i: number) => Number(fields[i - 3]);
  const values = [n(4), n(14), n(15), n(16), n(17)];
  if (!values.every(Number.isFinite)) return undefined;
  return { comm: text.slice(open + 1, close), ppid: n(4), ticks: n(14) + n(15), childTicks: n(16) + n(17) };
}

/** /proc/<pid>/stat of a process, parsed; undefined without /proc or once it has exited. */
export function readPidStat(pid: number | undefined): PidStat | undefined {
  if (pid === undefined) return undefined;
  try {
    return parsePidStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** User + system CPU time of a process in ms, from /proc (Linux); undefined elsewhere. */
function processCpuMs(pid: number | undefined): number | undefined {
  const stat = readPidStat(pid);
  return stat === undefined ? undefined : (stat.ticks * 1000) / CLOCK_TICKS;
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

/**
 * Open sockets of a process (Linux: its descriptors that link to `socket:[…]`); undefined elsewhere. Files the
 * process opens meanwhile (a SQLite connection of its checkpoint thread) are not counted.
 */
export function openSockets(pid: number | undefined): number | undefined {
  const dir = `/proc/${pid}/fd`;
  try {
    let sockets = 0;
    for (const fd of readdirSync(dir)) {
      try {
        if (readlinkSync(`${dir}/${fd}`).startsWith('socket:')) sockets++;
      } catch {
        // Closed between the listing and the read: not open.
      }
    }
    return sockets;
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
