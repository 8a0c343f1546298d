// The checks of the parallel-steps sections, on the store and the per-run log of test/fixtures/tools/chaos-tools.mjs
// (chaos_parallel): shared with the oracles' self-check (scripts/chaos/oracles/parallel-history.ts).
import type { Invariants } from '../harness/invariants.js';
import type { LogLine } from '../harness/log-tail.js';
import type { SectionStats } from '../types.js';

export const PARALLEL_INVARIANTS: Readonly<Record<string, string>> = {
  terminal:
    'every task created completes (none fails: a replay that left its history would end failed with a non-determinism error) within the bound',
  memo: 'no step whose value was committed has its body run again by a run that started after the commit, whichever of the parallel steps it is',
  'kept-effect':
    'every kept step value is the effect of exactly one body: its nonce was logged once, by the run the value names',
  result:
    "every result holds exactly the values the store kept for its task's steps, the map's items in item order",
  'no-crash': 'no server process exits unless killed by the driver',
  kills: 'the planned number of kills was reached within the time bound',
};

export interface ParallelStats extends SectionStats {
  tasks: number;
  kills: number;
  runs: number;
  /** Step bodies begun again after a kill or a lost lease had cut an earlier one short (no value kept). */
  rerunBodies: number;
  /** Runs that replayed some parallel steps from the store and ran the others. */
  partialReplays: number;
  settleMs?: number;
}

export interface Stored {
  tasks: { id: string; status: string; result: string | null }[];
  steps: { task_id: string; name: string; value: string; saved_at: number | null }[];
}

/** The fields of a chaos_parallel step's value: the run that computed it and the nonce of its effect. */
const VALUE_KEYS = ['run', 'nonce'];

/** The steps of a chaos_parallel task of `items` items. */
export const stepNames = (items: number): string[] => [
  'before',
  ...Array.from({ length: items }, (_, i) => `part[${i}]`),
  'side',
  'after',
];

export interface TaskLog {
  runStart: Map<string, number>;
  starts: LogLine[];
  effects: LogLine[];
}

export function byTask(lines: LogLine[]): Map<string, TaskLog> {
  const out = new Map<string, TaskLog>();
  for (const line of lines) {
    if (line.task === '-') continue;
    let log = out.get(line.task);
    if (log === undefined) out.set(line.task, (log = { runStart: new Map(), starts: [], effects: [] }));
    if (line.event === 'run-start') log.runStart.set(line.run, line.t);
    else if (line.event === 'step-start') log.starts.push(line);
    else if (line.event === 'effect') log.effects.push(line);
  }
  return out;
}

/** Checks one task against its log and its stored steps; counts what happened to it. */
export function checkTask(
  inv: Invariants,
  stats: Pick<ParallelStats, 'rerunBodies' | 'partialReplays'>,
  items: number,
  task: Stored['tasks'][number],
  steps: Stored['steps'],
  log: TaskLog | undefined,
): void {
  if (!inv.expect('terminal', task.status === 'completed', `task ${task.id} ended ${task.status}`)) return;
  const kept = new Map(steps.map((s) => [s.name, s]));
  const names = stepNames(items);
  inv.expect(
    'result',
    names.every((n) => kept.has(n)) && kept.size === names.length,
    () => `task ${task.id} kept steps ${[...kept.keys()].join(', ')}`,
  );
  const value = (name: string): { run: string; nonce: string } | undefined => {
    const step = kept.get(name);
    return step === undefined ? undefined : (JSON.parse(step.value) as { run: string; nonce: string });
  };
  for (const name of names) {
    const v = value(name);
    const step = kept.get(name);
    if (v === undefined || step === undefined) continue;
    const effects = (log?.effects ?? []).filter((e) => e.detail === `${name}=${v.nonce}`);
    inv.expect(
      'kept-effect',
      effects.length === 1 && effects[0]?.run === v.run,
      () => `task ${task.id} step ${name}: its value's nonce was logged ${effects.length} times`,
    );
    const savedAt = step.saved_at;
    if (savedAt === null) continue;
    const late = (log?.starts ?? []).filter(
      (s) => s.detail === name && s.run !== v.run && (log?.runStart.get(s.run) ?? 0) > savedAt,
    );
    inv.expect(
      'memo',
      late.length === 0,
      () => `task ${task.id} step ${name} committed at ${savedAt} ran again in run ${late[0]?.run}`,
    );
    const bodies = (log?.starts ?? []).filter((s) => s.detail === name).length;
    stats.rerunBodies += Math.max(0, bodies - 1);
  }
  const text = (JSON.parse(task.result ?? '{}') as { content?: { text?: string }[] }).content?.[0]?.text;
  const summary = JSON.parse(text ?? '{}') as Record<string, unknown>;
  const seen: Record<string, unknown> = {
    before: summary.before,
    side: summary.side,
    after: summary.after,
    ...Object.fromEntries(((summary.parts as unknown[]) ?? []).map((p, i) => [`part[${i}]`, p])),
  };
  const stored = Object.fromEntries(names.map((n) => [n, value(n)]));
  inv.expect(
    'result',
    // Compared field by field in one order (PostgreSQL's jsonb keeps keys in an order of its own).
    names.every((n) => JSON.stringify(seen[n], VALUE_KEYS) === JSON.stringify(stored[n], VALUE_KEYS)) &&
      Object.keys(seen).length === names.length,
    () => `task ${task.id}: its result saw ${JSON.stringify(seen)}, the store kept ${JSON.stringify(stored)}`,
  );
  // Runs that found some of the parallel steps kept and ran others.
  const parallel = names.filter((n) => n.startsWith('part[') || n === 'side');
  for (const run of log?.runStart.keys() ?? []) {
    const ran = new Set((log?.starts ?? []).filter((s) => s.run === run).map((s) => s.detail));
    const some = parallel.filter((n) => ran.has(n)).length;
    if (some > 0 && some < parallel.length && !ran.has('before')) stats.partialReplays++;
  }
}
