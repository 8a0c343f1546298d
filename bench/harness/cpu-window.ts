// Where the machine's CPU went during a measured run of a pg row (Linux /proc; nothing elsewhere): PostgreSQL's
// processes, the load generator (this process, which runs autocannon), the kernel's interrupt work, and whatever
// else ran on the cores. The capacity model (bench/model.ts, docs/scaling.md) is built from these figures.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { CpuFigures, Target } from '../types.js';
import { CLOCK_TICKS, readPidStat, targetCpuMs, type PidStat } from './proc-stats.js';

/** The machine's CPU time so far, from the `cpu` line of /proc/stat (clock ticks summed over every core). */
export interface SystemTicks {
  user: number;
  nice: number;
  system: number;
  idle: number;
  iowait: number;
  irq: number;
  softirq: number;
  steal: number;
}

/**
 * Parses the first (`cpu`, all cores) line of /proc/stat: user, nice, system, idle, iowait, irq, softirq, steal
 * (guest time is already inside user). Undefined for text without it.
 */
export function parseSystemTicks(text: string): SystemTicks | undefined {
  const line = /^cpu\s+([\d\s]+)$/m.exec(text);
  if (line === null) return undefined;
  const v = line[1]!.trim().split(/\s+/).map(Number);
  if (v.length < 8) return undefined;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = v as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { user, nice, system, idle, iowait, irq, softirq, steal };
}

/** Ticks the cores were busy: every field but idle and iowait. Steal (another guest held the core) counts. */
export const busyTicks = (t: SystemTicks): number => t.user + t.nice + t.system + t.irq + t.softirq + t.steal;

/** One TCP socket of /proc/net/tcp or tcp6: its local and remote ports and its inode. */
export interface TcpSocket {
  localPort: number;
  remotePort: number;
  inode: number;
}

/** Parses /proc/net/tcp or /proc/net/tcp6 (`sl local_address rem_address st … uid timeout inode …`, hex ports). */
export function parseTcpTable(text: string): TcpSocket[] {
  const sockets: TcpSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const port = (address: string) => parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
    sockets.push({ localPort: port(f[1]!), remotePort: port(f[2]!), inode: Number(f[9]) });
  }
  return sockets;
}

function readOr<T>(read: () => T, otherwise: T): T {
  try {
    return read();
  } catch {
    return otherwise;
  }
}

/** Every process named `postgres` (the postmaster and its children), by pid. */
function postgresProcesses(): Map<number, PidStat> {
  const found = new Map<number, PidStat>();
  for (const entry of readOr(() => readdirSync('/proc'), [])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readPidStat(Number(entry));
    if (stat?.comm === 'postgres') found.set(Number(entry), stat);
  }
  return found;
}

/** The local ports of the TCP connections `pids` hold to port `serverPort` (their PostgreSQL connections). */
export function clientPorts(pids: number[], serverPort: number): Set<number> {
  const inodes = new Set<number>();
  for (const pid of pids) {
    for (const fd of readOr(() => readdirSync(`/proc/${pid}/fd`), [])) {
      const link = readOr(() => readlinkSync(`/proc/${pid}/fd/${fd}`), '');
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m !== null) inodes.add(Number(m[1]));
    }
  }
  const table = ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((f) =>
    parseTcpTable(readOr(() => readFileSync(f, 'utf8'), '')),
  );
  return new Set(
    table.filter((s) => inodes.has(s.inode) && s.remotePort === serverPort).map((s) => s.localPort),
  );
}

/** What a run's CPU figures are computed from, read at one instant. */
export interface CpuSnapshot {
  atMs: number;
  system: SystemTicks | undefined;
  postgres: Map<number, PidStat>;
  /** The target's processes (all replicas), ms. */
  serverMs: number | undefined;
  /** This process (the load generator), µs. */
  selfUs: number;
}

const selfUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Reads a snapshot; `edge` says which side of the window it is on, so that the reading of /proc itself (a scan of
 * every process) falls outside the window: the process-wide figures are read first at its start, last at its end.
 */
export function cpuSnapshot(target: Target, edge: 'start' | 'end'): CpuSnapshot {
  const system = () => readOr(() => parseSystemTicks(readFileSync('/proc/stat', 'utf8')), undefined);
  if (edge === 'start') {
    const postgres = postgresProcesses();
    const serverMs = targetCpuMs(target);
    const sys = system();
    return { postgres, serverMs, system: sys, selfUs: selfUs(), atMs: performance.now() };
  }
  const atMs = performance.now();
  const self = selfUs();
  const sys = system();
  const serverMs = targetCpuMs(target);
  return { atMs, selfUs: self, system: sys, serverMs, postgres: postgresProcesses() };
}

/**
 * PostgreSQL's CPU ticks over a window. `all`: every postgres process, a process gone by the end counted through
 * its parent's reaped-children ticks. `own`: the processes in `own` only (none gone: a backend that exits takes
 * its last ticks with it).
 */
export function postgresTicks(
  before: Map<number, PidStat>,
  after: Map<number, PidStat>,
  own: Set<number> | undefined,
): { all: number; own: number | null } {
  let all = 0;
  let mine = 0;
  for (const [pid, stat] of after) {
    const was = before.get(pid);
    // A pid reused by a new process shows fewer ticks than before: count the new process from zero.
    const d = was === undefined || was.ticks > stat.ticks ? stat.ticks : stat.ticks - was.ticks;
    all += d;
    if (own?.has(pid) === true) mine += d;
    const parentIsPostgres = after.has(stat.ppid);
    if (!parentIsPostgres) all += stat.childTicks - (was?.childTicks ?? stat.childTicks);
  }
  for (const [pid, stat] of before) if (!after.has(pid)) all -= stat.ticks;
  return { all, own: own === undefined ? null : mine };
}

/** The figures of a window from its two snapshots, for `ops` operations. */
export function cpuFigures(
  before: CpuSnapshot,
  after: CpuSnapshot,
  ops: number,
  opts: { own?: Set<number>; load: boolean; ticksPerSecond?: number },
): CpuFigures {
  const hz = opts.ticksPerSecond ?? CLOCK_TICKS;
  const seconds = (after.atMs - before.atMs) / 1000;
  const none: CpuFigures = {
    pgCpuUs: null,
    pgAllCpuUs: null,
    loadCpuUs: null,
    kernelUs: null,
    busyCores: null,
    otherCores: null,
    windowS: null,
  };
  if (ops <= 0 || seconds <= 0) return none;
  const perOp = (us: number) => Math.round((us / ops) * 10) / 10;
  const cores = (us: number) => Math.round((us / 1e6 / seconds) * 100) / 100;
  const ticksUs = (t: number) => (t * 1e6) / hz;
  const hasPg = before.postgres.size > 0 && after.postgres.size > 0;
  const pg = hasPg ? postgresTicks(before.postgres, after.postgres, opts.own) : undefined;
  const pgUs = pg === undefined ? undefined : ticksUs(pg.own ?? pg.all);
  const loadUs = after.selfUs - before.selfUs;
  const figures: CpuFigures = {
    ...none,
    pgCpuUs: pgUs === undefined ? null : perOp(pgUs),
    pgAllCpuUs: pg === undefined ? null : perOp(ticksUs(pg.all)),
    loadCpuUs: opts.load ? perOp(loadUs) : null,
    windowS: Math.round(seconds * 1000) / 1000,
  };
  const s0 = before.system;
  const s1 = after.system;
  if (s0 === undefined || s1 === undefined) return figures;
  const kernelUs = ticksUs(s1.irq + s1.softirq - s0.irq - s0.softirq);
  const busyUs = ticksUs(busyTicks(s1) - busyTicks(s0));
  const serverUs =
    before.serverMs === undefined || after.serverMs === undefined
      ? 0
      : (after.serverMs - before.serverMs) * 1000;
  // Without PostgreSQL's processes in view (another machine, a container) its CPU is in no term: none counted.
  const ours = serverUs + (pgUs ?? 0) + loadUs + kernelUs;
  return {
    ...figures,
    kernelUs: perOp(kernelUs),
    busyCores: cores(busyUs),
    otherCores: cores(busyUs - ours),
  };
}

/** The pids of a row's PostgreSQL processes: its clients' backends (by their ports), the background ones, the postmaster. */
export function ownPostgresPids(
  backends: Array<{ pid: number; port: number | null; type: string }>,
  ports: Set<number>,
  postgres: Map<number, PidStat>,
): Set<number> {
  const own = new Set<number>();
  for (const b of backends) {
    if (b.type === 'client backend' ? b.port !== null && ports.has(b.port) : true) own.add(b.pid);
  }
  for (const [pid, stat] of postgres) if (!postgres.has(stat.ppid)) own.add(pid);
  return own;
}
