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
}

export interface RunLog {
  runs: LoggedRun[];
  /** Runs of processes not (yet) killed that have not logged their end. */
  open: Omit<LoggedRun, 'end' | 'killed'>[];
  /** Lines that make no sense: an end without a start, an unknown kind. */
  problems: string[];
}

/**
 * Reads lines `start|end <task> <run> <pid> <ms>`; `killedAt` maps the pid of each killed process to the time it
 * was seen dead. A run of a killed process still open at the end of the log ends at its process's death.
 */
export function readRunLog(text: string, killedAt: ReadonlyMap<string, number>): RunLog {
  const open = new Map<string, Omit<LoggedRun, 'end' | 'killed'>>();
  const runs: LoggedRun[] = [];
  const problems: string[] = [];
  for (const line of text.split('\n').filter(Boolean)) {
    const [kind, task = '', run = '', pid = '', at = ''] = line.split(' ');
    const time = Number(at);
    if (kind === 'start') open.set(run, { task, run, pid, start: time });
    else if (kind === 'end') {
      const started = open.get(run);
      if (started === undefined) problems.push(`end without a start: ${line}`);
      else runs.push({ ...started, end: time, killed: false });
      open.delete(run);
    } else problems.push(`unknown line: ${line}`);
  }
  const left: RunLog['open'] = [];
  for (const started of open.values()) {
    const died = killedAt.get(started.pid);
    if (died === undefined) left.push(started);
    else runs.push({ ...started, end: died, killed: true });
  }
  return { runs, open: left, problems };
}

/**
 * The most intervals that hold one moment together. Times are whole milliseconds: an interval ending at the
 * millisecond another starts is taken to have ended first.
 */
export function mostAtOnce(intervals: readonly Interval[]): number {
  const edges = intervals.flatMap((i) => [
    { at: i.start, delta: 1 },
    { at: i.end, delta: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const e of edges) {
    now += e.delta;
    most = Math.max(most, now);
  }
  return most;
}
