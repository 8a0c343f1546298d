// From what a push run recorded (stream events, commit and write stamps, the poller's answers) to its sample.
import { PUSH_GROUPS, PUSH_STREAMS } from '../config.js';
import { firstText } from '../harness/http.js';
import type { PollResult } from '../harness/poller.js';
import { serverNs, type TaskStream } from '../harness/task-stream.js';
import { latencySample, percentile } from '../stats.js';
import type { ByStatus, LatencySample } from '../types.js';

type Kind = keyof ByStatus<unknown>;
const KINDS: Kind[] = ['working', 'completed'];

/** When a transition happened, per kind (clockNs). */
export type Stamps = Partial<Record<Kind, number>>;

/** What the answering loop recorded: per task, when its answer was sent; round trips; run-queue waits. */
export interface StepsRun {
  steps: number;
  sent: Map<string, number>;
  updates: number[];
  waited: Map<string, number>;
  elapsed: number;
}

export interface PushRecord {
  streams: TaskStream[];
  replicas: number;
  run: StepsRun;
  polled: PollResult;
  commits: Map<string, Stamps>;
  written: Map<string, number[]>;
}

/** What one stream saw of one answered task: its first `working` and `completed`, and the handler's return. */
interface Seen extends Stamps {
  doneAt?: number;
}

const byStatusLists = (): ByStatus<number[]> => ({ working: [], completed: [] });

/**
 * The server's share, per transition: from its commit to the first and the last of its events being written
 * (with replicas, over all of them).
 */
function serverShareOf({ written, commits, run }: PushRecord) {
  const serverShare = { first: [] as number[], last: [] as number[] };
  for (const [key, list] of written) {
    const [id, kind] = key.split(' ') as [string, Kind];
    const at = commits.get(id)?.[kind];
    if (at === undefined || !run.sent.has(id)) continue;
    serverShare.first.push((Math.min(...list) - at) / 1e6);
    serverShare.last.push((Math.max(...list) - at) / 1e6);
  }
  return serverShare;
}

/** Per answered task a stream watches: the first `working` (unless `completed` came first) and `completed`. */
function seenOnStream(st: TaskStream, sent: Map<string, number>): Map<string, Seen> {
  const seen = new Map<string, Seen>();
  for (const { msg, at } of st.recorded()) {
    if (msg.method !== 'notifications/tasks' || !sent.has(msg.params.taskId)) continue;
    const { taskId, status } = msg.params;
    let s = seen.get(taskId);
    if (s === undefined) seen.set(taskId, (s = {}));
    if (status === 'working' && s.working === undefined && s.completed === undefined) s.working = at;
    if (status === 'completed' && s.completed === undefined) {
      s.completed = at;
      const m = /^done (\d+)$/.exec(firstText(msg.params.result));
      if (m === null) throw new Error(`completed event of ${taskId} without the handler's clock`);
      s.doneAt = serverNs(m[1]!);
    }
  }
  return seen;
}

/**
 * With replicas a stamp is when a process learnt of the commit, and another replica's read (set out for an earlier
 * change) may see the commit and push it before any process has learnt of it: the commit is then no later than the
 * first event showing it.
 */
function boundCommitsByEvents(seenByStream: Array<Map<string, Seen>>, commits: Map<string, Stamps>): void {
  for (const seen of seenByStream) {
    for (const [id, s] of seen) {
      const at = commits.get(id);
      if (at === undefined) continue;
      for (const kind of KINDS) {
        const event = s[kind];
        const commit = at[kind];
        if (event !== undefined && commit !== undefined) at[kind] = Math.min(commit, event);
      }
    }
  }
}

/** Every stream's events timed from their commits and from their causes, and each task's slowest event. */
function timeEvents(seenByStream: Array<Map<string, Seen>>, { commits, run }: PushRecord) {
  const byStatus = byStatusLists();
  const fromCause = byStatusLists();
  let coalesced = 0;
  // Per answered task: its slowest event (from the commit), over both statuses and all its subscribers.
  const slowest = new Map<string, number>();
  const timeEvent = (status: Kind, id: string, ms: number) => {
    byStatus[status].push(ms);
    slowest.set(id, Math.max(slowest.get(id) ?? 0, ms));
  };
  for (const seen of seenByStream) {
    for (const [id, s] of seen) {
      const at = commits.get(id);
      if (s.completed === undefined) throw new Error(`stream saw ${id} resume but not complete`);
      if (at?.completed === undefined) throw new Error(`no commit time for the completion of ${id}`);
      timeEvent('completed', id, (s.completed - at.completed) / 1e6);
      fromCause.completed.push((s.completed - s.doneAt!) / 1e6);
      if (s.working === undefined) {
        coalesced++;
        continue;
      }
      if (at.working === undefined) throw new Error(`no commit time for the resumption of ${id}`);
      timeEvent('working', id, (s.working - at.working) / 1e6);
      fromCause.working.push((s.working - run.sent.get(id)!) / 1e6);
    }
  }
  return { byStatus, fromCause, coalesced, slowest };
}

/** How soon the poller learnt of each transition: its first answer showing the new status, from the commit. */
function discoveredOf({ polled, commits }: PushRecord): ByStatus<number[]> {
  const discovered = byStatusLists();
  for (const [id, seen] of polled.firstSeen) {
    const at = commits.get(id);
    for (const st of KINDS) {
      const first = seen[st];
      const commit = at?.[st];
      if (first !== undefined && commit !== undefined) discovered[st].push((first - commit) / 1e6);
    }
  }
  return discovered;
}

export function analyzePush(record: PushRecord): LatencySample {
  const { run, polled } = record;
  const serverShare = serverShareOf(record);
  const seenByStream = record.streams.map((st) => seenOnStream(st, run.sent));
  if (record.replicas > 1) boundCommitsByEvents(seenByStream, record.commits);
  const { byStatus, fromCause, coalesced, slowest } = timeEvents(seenByStream, record);
  const discovered = discoveredOf(record);
  const timed = PUSH_STREAMS / PUSH_GROUPS;
  if (byStatus.completed.length !== run.steps * timed) {
    throw new Error(`${byStatus.completed.length} completed events timed, expected ${run.steps * timed}`);
  }
  const latencies = [...byStatus.working, ...byStatus.completed];
  if ([...latencies, ...fromCause.working, ...fromCause.completed].some((ms) => ms < 0)) {
    throw new Error('negative push latency: the server and the harness do not share a monotonic clock');
  }
  const updates = [...run.updates].sort((a, b) => a - b);
  return latencySample(latencies, run.elapsed, {
    steps: run.steps,
    byStatus,
    fromCause,
    coalesced,
    pollRtt: polled.rtt,
    discovered,
    serverShare,
    // [slowest event ms, client run-queue wait ms] per answered task (Linux only).
    stepWaits: [...run.waited].map(([id, ms]): [number, number] => [slowest.get(id) ?? 0, ms]),
    updateP50: percentile(updates, 0.5),
    updateP99: percentile(updates, 0.99),
  });
}
