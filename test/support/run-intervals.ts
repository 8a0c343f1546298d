// Runs as intervals of time, read from a log of run starts and ends, and the most of them at once: for tests of
// limits on how many tasks run together. A run whose process was killed before it logged its end ends at the kill.

export interface Interval {
  start: number;
  end: number;
}

export interface LoggedRun extends Interval {
  task: string;
  run: string;
  pid: string;
  /** True when its process was killed before the run ended. */
  killed: boolean;
  /** Why the run was stopped before its end, as it logged it (e.g. `lease-lost`); '' when it was not. */
  stopped: string;
}

export interface RunLog {
  runs: LoggedRun[];
  /** Runs of processes not (yet) killed that have not logged their end. */
  open: Omit<LoggedRun, 'end' | 'killed' | 'stopped'>[];
  /** Freezes of a process (`freeze - <from> <pid> <to>`: its event loop held up from `from` to `to`). */
  freezes: (Interval & { pid: string })[];
  /** Lines that make no sense: an end without a start, an unknown kind. */
  problems: string[];
}

/**
 * Reads lines `start|end <task> <run> <pid> <ms> [why stopped]`; `killedAt` maps the pid of each killed process to
 * the time it was seen dead. A run of a killed process still open at the end of the log ends at its process's death.
 */
export function readRunLog(text: string, killedAt: ReadonlyMap<string, number>): RunLog {
  const open = new Map<string, RunLog['open'][number]>();
  const runs: LoggedRun[] = [];
  const problems: string[] = [];
  const freezes: RunLog['freezes'] = [];
  for (const line of text.split('\n').filter(Boolean)) {
    const [kind, task = '', run = '', pid = '', at = '', stopped = ''] = line.split(' ');
    const time = Number(at);
    if (kind === 'start') open.set(run, { task, run, pid, start: time });
    else if (kind === 'freeze') freezes.push({ pid, start: Number(run), end: time });
    else if (kind === 'end') {
      const started = open.get(run);
      if (started === undefined) problems.push(`end without a start: ${line}`);
      else runs.push({ ...started, end: time, killed: false, stopped });
      open.delete(run);
    } else problems.push(`unknown line: ${line}`);
  }
  const left: RunLog['open'] = [];
  for (const started of open.values()) {
    const died = killedAt.get(started.pid);
    if (died === undefined) left.push(started);
    else runs.push({ ...started, end: died, killed: true, stopped: '' });
  }
  return { runs, open: left, freezes, problems };
}

/**
 * Whether a run may have lost its lease without its process dying (the store may then give its slot to another run
 * while it goes on): it lasted `ms` or more, or its process froze while it ran or within `leaseMs` before it started
 * (between its claim, which set its lease, and its start).
 */
export function mayHaveLapsed(
  run: LoggedRun,
  freezes: RunLog['freezes'],
  leaseMs: number,
  ms: number,
): boolean {
  if (run.end - run.start >= ms) return true;
  return freezes.some((f) => f.pid === run.pid && f.end >= run.start - leaseMs && f.start <= run.end);
}

/**
 * The most intervals that hold one moment together. Times are whole milliseconds: an interval ending at the
 * millisecond another starts is taken to have ended first.
 */
export function mostAtOnce(intervals: readonly Interval[]): number {
  return busiest(intervals).most;
}

/** The most intervals that hold one moment together, and the first moment they do. */
export function busiest(intervals: readonly Interval[]): { most: number; at: number } {
  const edges = intervals.flatMap((i) => [
    { at: i.start, delta: 1 },
    { at: i.end, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let most = 0;
  let at = 0;
  for (const e of edges) {
    now += e.delta;
    if (now > most) [most, at] = [now, e.at];
  }
  return { most, at };
}

/** The intervals that hold the moment `at` (for a report of what overlapped). */
export const heldAt = <I extends Interval>(intervals: readonly I[], at: number): I[] =>
  intervals.filter((i) => i.start <= at && i.end > at);
