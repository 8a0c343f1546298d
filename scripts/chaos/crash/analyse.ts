// Checks the store and the per-attempt log of a crash or clock section against its invariants (also run on
// synthetic histories by the oracles section); returns figures for the report.
import type { LogLine } from '../harness/log-tail.js';
import { spread } from '../stats.js';
import { checkKeys, newDurableStats, wakeLateness } from './durable.js';
import { checkTask } from './analyse-task.js';
import type { AttemptCount, StepMemo, StoreSnapshot } from './types.js';
import type { AnalyseInput, Analysis, Indexes } from './analysis-types.js';

function newAnalysis(storedTasks: number): Analysis {
  return {
    storedTasks,
    ttlProbes: 0,
    completed: 0,
    cancelled: 0,
    failed: 0,
    runs: 0,
    resumedRuns: 0,
    crashReplays: 0,
    stepExecutions: 0,
    stepsCommitted: 0,
    stepReruns: 0,
    fencedRuns: 0,
    leaseLost: 0,
    maxAttempt: 0,
    answersChecked: 0,
    midCommit: { committedBeforeKill: 0, lostWithProcess: 0 },
    resumedAfterWait: 0,
    durable: newDurableStats(),
    duplicates: 0,
  };
}

function subMap<V>(outer: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let m = outer.get(key);
  if (m === undefined) outer.set(key, (m = new Map()));
  return m;
}

function index(store: StoreSnapshot, lines: LogLine[]): Indexes {
  const ix: Indexes = {
    linesByTask: new Map(),
    killedSeq: new Map(),
    killedAt: new Map(),
    stepsByTask: new Map(),
    attemptsByTask: new Map(),
    replayDelays: [],
  };
  for (const l of lines) {
    if (l.event === 'killed') {
      ix.killedSeq.set(l.pid, l.seq);
      ix.killedAt.set(l.pid, l.t);
      continue;
    }
    let list = ix.linesByTask.get(l.task);
    if (list === undefined) ix.linesByTask.set(l.task, (list = []));
    list.push(l);
  }
  for (const s of store.steps) subMap(ix.stepsByTask, s.task_id).set(s.name, JSON.parse(s.value) as StepMemo);
  for (const a of store.attempts ?? []) {
    let last: AttemptCount['last'];
    try {
      last = JSON.parse(a.last_failure as string) as AttemptCount['last'];
    } catch {
      last = undefined;
    }
    subMap(ix.attemptsByTask, a.task_id).set(a.name, { failed: Number(a.failed), last });
  }
  return ix;
}

export function analyse(input: AnalyseInput): Analysis {
  const { store, byTask, recs, kills, inv, params } = input;
  // Retries, sleeps and idempotency keys are judged where their times share one clock: not under clock jumps.
  const durable = params.jumps === undefined;
  const out = newAnalysis(store.tasks.length);
  const ix = index(store, input.lines);
  const seenCids = new Map<string, string>();
  for (const row of store.tasks) checkTask(row, { input, ix, out, seenCids });
  if (durable) {
    const jobs = store.tasks.filter((t) => t.tool === 'chaos_job');
    out.duplicates = checkKeys({ tasks: jobs, recs: recs ?? [...byTask.values()], inv });
    out.wakeLate = wakeLateness(out.durable);
    delete out.durable.wakeLate;
  }
  // Where did the mid-commit kills land: before or after the step's commit?
  for (const k of kills) {
    if (k.point !== 'mid-commit') continue;
    const stored = ix.stepsByTask.get(k.task as string)?.get(k.step as string);
    if (stored?.run === k.run) out.midCommit.committedBeforeKill += 1;
    else out.midCommit.lostWithProcess += 1;
  }
  for (const rec of byTask.values()) {
    inv.expect(
      'handles',
      store.tasks.some((t) => t.id === rec.taskId),
      `handle ${rec.taskId} returned by tools/call is not in the store`,
    );
  }
  out.replayDelay = spread(ix.replayDelays);
  return out;
}
