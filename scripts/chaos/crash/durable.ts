// The durable-execution workload of the crash sections: steps that fail some attempts and are retried after a
// backoff, durable sleeps between steps, and tools/call retried under an idempotency key after a lost answer.
// Here: the plan of each task, what clients note, and the idempotency check (durable-check.ts judges the log).
import type { Invariants } from '../harness/invariants.js';
import type { Rng } from '../harness/random.js';
import { spread, type Spread } from '../stats.js';
import type { DurableParams } from '../types.js';
import type { ClientRec, DurablePlan, DurableStats, JobArgs, TaskRow } from './types.js';

export const DURABLE_INVARIANTS = {
  attempts:
    'attempts of a retried step are numbered 1, 2, … across runs and processes: attempt N+1 starts only after attempt N failed, no number is skipped, and a number runs again only where a kill, a lost lease or a failed store write interrupted it before its outcome was stored; the value committed is that of the first attempt planned to succeed, the store counts exactly the planned failures, and a step out of attempts ends the task completed with isError and its last error',
  waits:
    'a sleep never ends before its wake time, which the first run that waited fixed (a replay does not restart it); a retry never starts before its backoff has passed (unless the process was killed before it stored the wait); the waits clients were told of are the stored ones',
  idempotent:
    'a tools/call retried with the same idempotency key (after a kill mid-create, an answer dropped on purpose, or sent to two processes at once) makes one task: every key maps to exactly one task in the store, no task of the same call exists without it, and every answer the client got named that task',
};

/** The message of a planned failure, as the fixture words it (and the isError result carries it). */
export const plannedFailure = (name: string, attempt: number): string =>
  `planned failure of ${name}, attempt ${attempt}`;

export const RETRY_STATUS = /^Retrying step "(s\d+)" \(attempt (\d+)(?: of (\d+))?\) at (.+)\.$/;
export const SLEEP_STATUS = /^Sleeping until (.+)\.$/;

/**
 * The retries and sleeps of one chaos_job, drawn from the section's parameters (the clock sections have none):
 * `fails` (planned failed attempts per step), `retry` (short backoffs, so that waits cross kills and processes;
 * some tasks get fewer attempts than they need and must give up), `sleeps` (ms after each step, 0 for none).
 */
export function planDurable(rng: Rng, params: Partial<DurableParams>, steps: number): DurablePlan {
  const out: DurablePlan = {};
  const some = (draw: () => number): number[] => {
    const list: number[] = Array.from({ length: steps }, () => (rng.chance(0.5) ? draw() : 0));
    if (!list.some((v) => v !== 0)) list[rng.int(0, steps - 1)] = draw();
    return list;
  };
  const p = params as DurableParams;
  if (rng.chance(params.retryRate ?? 0)) {
    out.fails = some(() => rng.int(1, p.failMax));
    const most = Math.max(...out.fails);
    out.retry = {
      maxAttempts: rng.chance(p.giveUpRate) ? most : most + rng.int(1, 2),
      initialDelayMs: rng.int(p.backoffMinMs, Math.max(p.backoffMinMs, p.backoffMaxMs / 2)),
      backoffFactor: 2,
      maxDelayMs: p.backoffMaxMs,
      jitter: 0.2,
    };
  }
  if (rng.chance(params.sleepRate ?? 0)) out.sleeps = some(() => rng.int(p.sleepMsMin, p.sleepMsMax));
  return out;
}

/** The step that runs out of attempts (its index), or -1 when every step gets the attempts it needs. */
export const giveUpStep = (args: JobArgs): number =>
  args.retry === undefined
    ? -1
    : Array.from({ length: args.steps }, (_, i) => args.fails?.[i] ?? 0).findIndex(
        (f) => f >= (args.retry?.maxAttempts ?? 0),
      );

/** What the client saw of a task's waits, from statusMessage: kept to be compared with the store afterwards. */
export function noteStatus(rec: ClientRec, message: unknown): void {
  if (typeof message !== 'string') return;
  if (RETRY_STATUS.test(message) || SLEEP_STATUS.test(message)) (rec.waitsSeen ??= new Set()).add(message);
}

export function newDurableStats(): DurableStats {
  return {
    retryTasks: 0,
    sleepTasks: 0,
    gaveUp: 0,
    failedAttempts: 0,
    repeatedAttempts: 0,
    retries: 0,
    retriesElsewhere: 0,
    sleeps: 0,
    sleepsElsewhere: 0,
    wakeLate: [],
    statusSeen: 0,
  };
}

const groupBy = <T>(items: readonly T[], key: (item: T) => string | null | undefined): Map<string, T[]> => {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === null || k === undefined) continue;
    const list = out.get(k);
    if (list === undefined) out.set(k, [item]);
    else list.push(item);
  }
  return out;
};

/** Every key a client sent maps to one task, the one its answers named; no task of a keyed call lacks its key. */
export function checkKeys({
  tasks,
  recs,
  inv,
}: {
  tasks: TaskRow[];
  recs: ClientRec[];
  inv: Invariants;
}): number {
  const byCid = groupBy(tasks, (row) => (JSON.parse(row.args) as JobArgs).cid);
  const byKey = groupBy(tasks, (row) => row.idempotency_key);
  const used = new Set<string>();
  let duplicates = 0;
  for (const rec of recs) {
    if (rec.key === undefined || rec.taskId === undefined) continue;
    used.add(rec.key);
    const keyed = byKey.get(rec.key) ?? [];
    const same = byCid.get(rec.cid) ?? [];
    duplicates += Math.max(0, same.length - 1);
    inv.expect(
      'idempotent',
      keyed.length === 1 && keyed[0]?.id === rec.taskId,
      () =>
        `key ${rec.key}: the store holds ${keyed.map((r) => r.id).join(', ') || 'no task'}, the client has ${rec.taskId}`,
    );
    inv.expect(
      'idempotent',
      same.length === 1,
      () => `call ${rec.cid} (key ${rec.key}) made ${same.length} tasks: ${same.map((r) => r.id).join(', ')}`,
    );
    inv.expect(
      'idempotent',
      rec.seenIds?.size === 1,
      () =>
        `call ${rec.cid} (key ${rec.key}) was answered with several tasks: ${[...(rec.seenIds ?? [])].join(', ')}`,
    );
  }
  for (const [key, rows] of byKey)
    inv.expect(
      'idempotent',
      used.has(key),
      () => `task ${rows[0]?.id} carries key ${key}, which no client holds`,
    );
  return duplicates;
}

/** How late sleeps woke (the first end after the stored wake time), for the report. */
export const wakeLateness = (out: DurableStats): Omit<Spread, 'max'> => {
  const { n, p50, p99 } = spread(out.wakeLate ?? []);
  return { n, p50, p99 };
};
