// The /proc parsing behind the pg rows' CPU figures, on fixture text: a process's stat line (a name with spaces and
// parentheses), the `cpu` line of /proc/stat, /proc/net/tcp, and the figures of a window from two snapshots.
import { describe, expect, it } from 'vitest';
import {
  busyTicks,
  cpuFigures,
  ownPostgresPids,
  parseSystemTicks,
  parseTcpTable,
  postgresTicks,
  type CpuSnapshot,
} from './cpu-window.js';
import { parsePidStat, type PidStat } from './proc-stats.js';

const STAT_LINE = (comm: string, ppid: number, utime: number, stime: number, cutime = 0, cstime = 0) =>
  `4242 (${comm}) S ${ppid} 2238 2238 0 -1 4194624 1536 0 0 0 ${utime} ${stime} ${cutime} ${cstime} 20 0 1 0 ` +
  '93005 225402880 6785 18446744073709551615 1 1 0 0 0 0 4194304 19935367 536873479 0 0 0 17 1 0 0 0 0 0';

describe('/proc/<pid>/stat', () => {
  it('reads fields 4 and 14–17, counted from the last parenthesis', () => {
    expect(parsePidStat(STAT_LINE('postgres', 2238, 57, 13, 4, 2))).toEqual({
      comm: 'postgres',
      ppid: 2238,
      ticks: 70,
      childTicks: 6,
    });
    // A name holding spaces and parentheses does not shift the fields.
    expect(parsePidStat(STAT_LINE('a (b) c', 1, 3, 4))).toEqual({
      comm: 'a (b) c',
      ppid: 1,
      ticks: 7,
      childTicks: 0,
    });
  });

  it('reads a line of the kernel as it is', () => {
    const real =
      '16976 (cat) R 16971 16971 7582 0 -1 4194304 102 0 0 0 0 0 0 0 20 0 1 0 93005 3133440 412 ' +
      '18446744073709551615 94413563162624 94413563182505 140726337886240 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';
    expect(parsePidStat(real)).toEqual({ comm: 'cat', ppid: 16971, ticks: 0, childTicks: 0 });
  });

  it('refuses text of another shape', () => {
    expect(parsePidStat('')).toBeUndefined();
    expect(parsePidStat('12 (x) S')).toBeUndefined();
  });
});

describe('/proc/stat', () => {
  it('reads the all-cores line, not a single core', () => {
    const text =
      'cpu  25531 10 7095 43487 788 3 266 4801 0 0\n' +
      'cpu0 9174 0 3008 26419 69 0 54 2337 0 0\n' +
      'intr 123 0 0\nctxt 99\n';
    const t = parseSystemTicks(text)!;
    expect(t).toEqual({
      user: 25531,
      nice: 10,
      system: 7095,
      idle: 43487,
      iowait: 788,
      irq: 3,
      softirq: 266,
      steal: 4801,
    });
    // Idle and iowait are not busy; steal is (another guest held the core).
    expect(busyTicks(t)).toBe(25531 + 10 + 7095 + 3 + 266 + 4801);
  });

  it('is undefined without a cpu line', () => {
    expect(parseSystemTicks('cpu0 1 2 3 4 5 6 7 8\n')).toBeUndefined();
  });
});

describe('/proc/net/tcp', () => {
  it('reads hex ports and the inode', () => {
    const text =
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n' +
      '   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   106        0 7438 1 0 100 0 0 10 0\n' +
      '   1: 0100007F:B5C2 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 99871 1 0 20 4 30 10 -1\n';
    expect(parseTcpTable(text)).toEqual([
      { localPort: 5432, remotePort: 0, inode: 7438 },
      { localPort: 46530, remotePort: 5432, inode: 99871 },
    ]);
  });
});

const stat = (ticks: number, ppid = 1, childTicks = 0): PidStat => ({
  comm: 'postgres',
  ppid,
  ticks,
  childTicks,
});

describe("PostgreSQL's ticks over a window", () => {
  it('counts a backend gone during the window through the postmaster, and new ones from zero', () => {
    // 1: postmaster; 10: the row's backend; 11: another client's, which exits; 12: starts during the window.
    const before = new Map([
      [1, stat(100, 0, 500)],
      [10, stat(40, 1)],
      [11, stat(30, 1)],
    ]);
    const after = new Map([
      [1, stat(101, 0, 535)],
      [10, stat(60, 1)],
      [12, stat(7, 1)],
    ]);
    // 11 ran 5 ticks more before it exited: the postmaster reaped 35 (its 30 + 5).
    expect(postgresTicks(before, after, new Set([1, 10]))).toEqual({ all: 1 + 20 + 7 + 5, own: 21 });
    expect(postgresTicks(before, after, undefined).own).toBeNull();
  });
});

describe('the figures of a window', () => {
  const snap = (at: number, over: Partial<CpuSnapshot>): CpuSnapshot => ({
    atMs: at,
    system: undefined,
    postgres: new Map(),
    serverMs: undefined,
    selfUs: 0,
    ...over,
  });
  const ticks = (busy: number, irq: number) => ({
    user: busy,
    nice: 0,
    system: 0,
    idle: 0,
    iowait: 0,
    irq: 0,
    softirq: irq,
    steal: 0,
  });

  it('splits the busy cores into the row, the kernel and other work', () => {
    // 1 s at 100 ticks/s, 1,000 operations; the cores busy 180 ticks (1.8 cores), 10 of them interrupts.
    const before = snap(0, {
      system: ticks(1000, 50),
      postgres: new Map([[1, stat(0, 0)]]),
      serverMs: 0,
      selfUs: 0,
    });
    const after = snap(1000, {
      system: ticks(1170, 60),
      postgres: new Map([[1, stat(20, 0)]]),
      serverMs: 500,
      selfUs: 100_000,
    });
    const f = cpuFigures(before, after, 1000, { load: true, ticksPerSecond: 100 });
    expect(f).toEqual({
      pgCpuUs: 200,
      pgAllCpuUs: 200,
      loadCpuUs: 100,
      kernelUs: 100,
      busyCores: 1.8,
      // 1.8 − (0.5 server + 0.2 PostgreSQL + 0.1 load generator + 0.1 kernel)
      otherCores: 0.9,
      windowS: 1,
    });
  });

  it('gives nulls where /proc tells nothing, and no load generator for raw rows', () => {
    const f = cpuFigures(snap(0, {}), snap(1000, { selfUs: 5 }), 10, { load: false });
    expect(f).toEqual({
      pgCpuUs: null,
      pgAllCpuUs: null,
      loadCpuUs: null,
      kernelUs: null,
      busyCores: null,
      otherCores: null,
      windowS: 1,
    });
  });
});

describe("the row's own PostgreSQL processes", () => {
  it('are its clients’ backends, the background processes and the postmaster', () => {
    const backends = [
      { pid: 10, port: 40001, type: 'client backend' },
      { pid: 11, port: 40002, type: 'client backend' },
      { pid: 12, port: null, type: 'walwriter' },
    ];
    const postgres = new Map([
      [1, stat(0, 0)],
      [10, stat(0, 1)],
      [11, stat(0, 1)],
      [12, stat(0, 1)],
    ]);
    expect([...ownPostgresPids(backends, new Set([40001]), postgres)].sort((a, b) => a - b)).toEqual([
      1, 10, 12,
    ]);
  });
});
