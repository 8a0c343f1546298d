// The push latency run: 100 subscribers, tasks answered one at a time, each transition's events timed from its
// commit (read from the push server's commit clock) and from what caused it.
import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { PUSH_GROUPS, PUSH_STEPS_PER_SECOND, PUSH_STREAMS } from '../config.js';
import { expectJsonRpcResult, post, sendTo } from '../harness/http.js';
import { pollDuringSteps, type Poller } from '../harness/poller.js';
import { runQueueWaitMs } from '../harness/proc-stats.js';
import { answerTask, createInputTask } from '../harness/requests.js';
import { clockNs, completedMarker, serverNs, TaskStream } from '../harness/task-stream.js';
import { createTasks, waitForInput } from '../harness/tasks.js';
import type { LatencySample, RowState, TargetView } from '../types.js';
import { analyzePush, type Stamps, type StepsRun } from './push-analysis.js';

/** Opens PUSH_STREAMS streams (20 at a time, round-robin over the replicas); stream s watches group s % PUSH_GROUPS. */
async function openPushStreams(target: TargetView, groups: string[][], streams: TaskStream[]): Promise<void> {
  for (let s = 0; s < PUSH_STREAMS; s += 20) {
    const batch = Array.from({ length: Math.min(20, PUSH_STREAMS - s) }, (_, k) =>
      TaskStream.open(
        target.urls[(s + k) % target.urls.length]!,
        groups[(s + k) % PUSH_GROUPS]!,
        `push-${s + k}`,
      ),
    );
    streams.push(...(await Promise.all(batch)));
  }
  // Every stream has its snapshot of every task it watches before the first transition.
  await Promise.all(
    streams.map((st, s) =>
      st.until(
        () => groups[s % PUSH_GROUPS]!.every((id) => st.status.get(id) === 'input_required'),
        'input_required snapshot',
      ),
    ),
  );
}

/** Answers the tasks one at a time, each once every stream watching it has shown it completed. */
async function answerSteps(
  target: TargetView,
  agent: Agent,
  streams: TaskStream[],
  ids: string[],
  poller: Poller,
): Promise<StepsRun> {
  const sent = new Map<string, number>();
  const updates: number[] = [];
  const started = performance.now();
  // Per answered task: how long this client waited for a core (run queue) while its events were on their way.
  const waited = new Map<string, number>();
  for (let j = 0; j < ids.length; j++) {
    const id = ids[j]!;
    const waitedBefore = runQueueWaitMs();
    poller.watch(id);
    const marker = completedMarker(id);
    const completions = streams
      .filter((_, s) => s % PUSH_GROUPS === j % PUSH_GROUPS)
      .map((st) => st.expect(marker));
    const t0 = clockNs();
    const res = await post(agent, target.urls[j % target.urls.length]!, answerTask(id));
    updates.push((clockNs() - t0) / 1e6);
    sent.set(id, t0);
    const problem = expectJsonRpcResult(res.status, res.text);
    if (problem !== undefined) throw new Error(`tasks/update ${id}: ${problem}`);
    await Promise.all(completions);
    if (waitedBefore !== undefined) waited.set(id, runQueueWaitMs()! - waitedBefore);
  }
  return { steps: ids.length, sent, updates, waited, elapsed: (performance.now() - started) / 1000 };
}

/** The commit stamps of every transition: the earliest over the replicas (bench/children/push-server.ts). */
async function readCommits(target: TargetView): Promise<Map<string, Stamps>> {
  const commits = new Map<string, Stamps>();
  for (const url of target.urls) {
    const res = await sendTo(url, { method: 'GET', path: '/bench/commits' });
    for (const [id, at] of Object.entries(JSON.parse(res.text) as Record<string, Record<string, string>>)) {
      const entry = commits.get(id) ?? {};
      commits.set(id, entry);
      for (const [kind, ns] of Object.entries(at)) {
        const k = kind as keyof Stamps;
        entry[k] = Math.min(entry[k] ?? Infinity, serverNs(ns));
      }
    }
  }
  return commits;
}

/** When each transition's events were written to their sockets, keyed `<taskId> <status>`, over the replicas. */
async function readWrites(target: TargetView): Promise<Map<string, number[]>> {
  const written = new Map<string, number[]>();
  for (const url of target.urls) {
    const res = await sendTo(url, { method: 'GET', path: '/bench/writes' });
    for (const [id, byKind] of Object.entries(
      JSON.parse(res.text) as Record<string, Record<string, string[]>>,
    )) {
      for (const [kind, list] of Object.entries(byKind)) {
        const key = `${id} ${kind}`;
        written.set(key, [...(written.get(key) ?? []), ...list.map(serverNs)]);
      }
    }
  }
  return written;
}

/**
 * PUSH_STREAMS subscribers; stream s watches every task of group s % PUSH_GROUPS, so each transition is pushed to
 * PUSH_STREAMS / PUSH_GROUPS streams. The tasks are answered one at a time; per answered task and subscriber two
 * events are timed from the commit of their transition (bench/children/push-server.ts): `working` (the answer
 * resumed the task) and `completed` (the run's final write). The same events are also timed from what caused them:
 * `working` from just before the tasks/update was sent, `completed` from the moment the handler returned in the
 * worker (its monotonic clock, in the result), just before the worker commits the completion.
 */
export async function pushLatency(
  target: TargetView,
  _state: RowState | undefined,
  seconds: number,
): Promise<LatencySample> {
  const steps = Math.max(PUSH_GROUPS, Math.round(seconds * PUSH_STEPS_PER_SECOND));
  const ids = await createTasks(target, createInputTask, steps, 10);
  await waitForInput(target, ids);
  const groups = Array.from({ length: PUSH_GROUPS }, (_, g) => ids.filter((_, j) => j % PUSH_GROUPS === g));
  const streams: TaskStream[] = [];
  // With replicas, streams and answers go to them round-robin: most pushes cross from one process to another.
  const agent = new Agent({ keepAlive: true, maxSockets: target.urls.length });
  let poller: Poller | undefined;
  try {
    await openPushStreams(target, groups, streams);
    // Commit clocks from now on (every task is waiting for input: the next changes are the timed transitions).
    for (const url of target.urls) await sendTo(url, { method: 'POST', path: '/bench/commits' });
    for (const st of streams) st.record();
    poller = pollDuringSteps(target, ids[0]!);
    const run = await answerSteps(target, agent, streams, ids, poller);
    const polled = await poller.stop();
    poller = undefined;
    // Commit times and write times, read once the round is over (the requests would otherwise sit between
    // transitions).
    const commits = await readCommits(target);
    const written = await readWrites(target);
    return analyzePush({ streams, replicas: target.urls.length, run, polled, commits, written });
  } finally {
    await poller?.stop().catch(() => undefined);
    for (const st of streams) st.close();
    agent.destroy();
  }
}
