// Checks one chaos_job of the durable workload against the attempts and waits invariants, from the per-attempt
// log of test/fixtures/tools/chaos-tools.mjs and the store.
import type { Invariants } from '../harness/invariants.js';
import type { LogLine } from '../harness/log-tail.js';
import { giveUpStep, plannedFailure, RETRY_STATUS, SLEEP_STATUS } from './durable.js';
import type {
  AttemptCount,
  ClientRec,
  DurableStats,
  JobArgs,
  RetryPlan,
  RunView,
  StepMemo,
  TaskRow,
} from './types.js';

/** Run ends that stop an attempt before its outcome is stored (the runtime tries the same number again). */
const INTERRUPTIONS = new Set(['lease-lost', 'store-unavailable', 'aborted']);

/** One task's view: its row, arguments, log lines, runs, memos and attempt counts, and the processes killed. */
export interface TaskEvidence {
  row: TaskRow;
  args: JobArgs;
  /** Its log lines. */
  tl: LogLine[];
  runInfo: Map<string, RunView>;
  /** Step and sleep memos by name. */
  stored: Map<string, StepMemo>;
  /** name → failed attempts of task_step_attempts. */
  attempts: Map<string, AttemptCount>;
  /** pid → seq of its kill line. */
  killedSeq: Map<number, number>;
}

interface Judge {
  inv: Invariants;
  out: DurableStats;
}

/** The result of a completed task: whether it is an isError result, and its text. */
export interface ParsedResult {
  isError: boolean;
  text: string | undefined;
}

/** Checks one chaos_job; returns the parsed result, if the task completed. */
export function checkDurable(
  e: TaskEvidence,
  rec: ClientRec | undefined,
  { inv, out }: Judge,
): ParsedResult | undefined {
  const { row, args } = e;
  const gi = giveUpStep(args);
  if (args.fails !== undefined) out.retryTasks += 1;
  if (args.sleeps !== undefined) out.sleepTasks += 1;
  const result = row.status === 'completed' ? parseResult(row.result) : undefined;
  for (let i = 0; i < args.steps; i++) checkStep(e, i, gi, { inv, out });
  if (row.status === 'completed') {
    const expected = gi === -1 ? undefined : plannedFailure(`s${gi}`, (args.retry as RetryPlan).maxAttempts);
    if (gi !== -1) out.gaveUp += 1;
    inv.expect(
      'attempts',
      gi === -1 ? result?.isError !== true : result?.isError === true && result.text === expected,
      () =>
        `task ${row.id}: ${gi === -1 ? 'no step runs out of attempts, but the task ended with an error' : `step s${gi} runs out of attempts, expected the isError result "${expected}"`}: ${String(row.result).slice(0, 200)}`,
    );
  }
  checkSleeps(e, result, { inv, out });
  checkSeen(e, rec, { inv, out });
  return result;
}

function parseResult(text: string | null): ParsedResult | undefined {
  try {
    const r = JSON.parse(text as string) as { isError?: boolean; content?: { text?: string }[] };
    return { isError: r.isError === true, text: r.content?.[0]?.text };
  } catch {
    return undefined;
  }
}

/** How the attempt that `s` (a step-start line) began ended: stored (saved or failed), or interrupted. */
function outcomeOf(s: LogLine, e: TaskEvidence): string {
  const same = (event: string): boolean =>
    e.tl.some((l) => l.event === event && l.run === s.run && l.detail === s.detail);
  if (same('step-saved')) return 'saved';
  const end = e.runInfo.get(s.run)?.end;
  // The fixture sees the WaitPending (or the final error) only after the runtime stored the failure.
  if (same('step-fail') && (end?.detail === 'wait' || end?.detail === 'gave-up')) return 'failed';
  if (end === undefined) return (e.killedSeq.get(s.pid) ?? -1) > s.seq ? 'interrupted' : 'never ended';
  return INTERRUPTIONS.has(end.detail) ? 'interrupted' : `run ended ${end.detail}`;
}

/** The attempts of one step, as the log tells them. */
interface StepLog {
  name: string;
  where: string;
  starts: LogLine[];
  fails: LogLine[];
}

function checkStep(e: TaskEvidence, i: number, gi: number, judge: Judge): void {
  const { inv, out } = judge;
  const name = `s${i}`;
  const step: StepLog = {
    name,
    where: `task ${e.row.id} step ${name}`,
    starts: e.tl.filter((l) => l.event === 'step-start' && l.detail === name),
    fails: e.tl.filter((l) => l.event === 'step-fail' && l.detail === name),
  };
  out.failedAttempts += step.fails.length;
  const byNumber = new Map<number, { s: LogLine; outcome: string }[]>();
  for (const s of step.starts) {
    const n = s.n as number;
    // No gap: attempt N+1 begins only after attempt N failed (in whichever run or process).
    inv.expect(
      'attempts',
      n === 1 || step.fails.some((f) => f.n === n - 1 && f.seq < s.seq),
      () => `${step.where}: attempt ${n} began (run ${s.run}) before any attempt ${n - 1} had failed`,
    );
    const list = byNumber.get(n) ?? [];
    byNumber.set(n, list);
    list.push({ s, outcome: outcomeOf(s, e) });
  }
  for (const [n, list] of byNumber) checkAttempt(e, step, n, list, judge);
  checkStepEnd(e, step, i, gi, inv);
}

/** One attempt number of a step: stored at most once, otherwise interrupted; never again once stored failed. */
function checkAttempt(
  e: TaskEvidence,
  step: StepLog,
  n: number,
  list: { s: LogLine; outcome: string }[],
  judge: Judge,
): void {
  const { inv, out } = judge;
  out.repeatedAttempts += list.length - 1;
  const stored = list.filter((a) => a.outcome === 'saved' || a.outcome === 'failed');
  inv.expect(
    'attempts',
    stored.length <= 1,
    () => `${step.where}: attempt ${n} ran to a stored outcome ${stored.length} times`,
  );
  for (const a of list) {
    if (a.outcome === 'saved' || a.outcome === 'failed') continue;
    inv.expect(
      'attempts',
      a.outcome === 'interrupted',
      () =>
        `${step.where}: attempt ${n} in run ${a.s.run} (pid ${a.s.pid}) has no stored outcome: ${a.outcome}`,
    );
  }
  // A failure once stored is never tried again: runs that start after it begin at N+1.
  for (const a of list) {
    if (a.outcome !== 'failed') continue;
    const endSeq = (e.runInfo.get(a.s.run)?.end as LogLine).seq;
    for (const later of step.starts) {
      if ((later.n as number) > n || (e.runInfo.get(later.run) as RunView).start.seq < endSeq) continue;
      inv.fail(
        'attempts',
        `${step.where}: attempt ${later.n} ran again in run ${later.run} after attempt ${n} was stored as failed`,
      );
    }
    checkBackoff(e, step, a.s, n, judge);
  }
}

/** The highest attempt begun and what the store holds of the step agree with the plan. */
function checkStepEnd(e: TaskEvidence, step: StepLog, i: number, gi: number, inv: Invariants): void {
  const { args, row } = e;
  const planned = args.fails?.[i] ?? 0;
  const maxAttempts = args.retry?.maxAttempts ?? 1;
  const where = step.where;
  const highest = Math.max(0, ...step.starts.map((s) => s.n as number));
  const kept = e.attempts.get(step.name);
  const value = e.stored.get(step.name);
  if (value !== undefined) {
    inv.expect(
      'attempts',
      value.attempt === planned + 1 && highest === planned + 1 && (kept?.failed ?? 0) === planned,
      () =>
        `${where}: committed from attempt ${value.attempt} (highest begun ${highest}, ${kept?.failed ?? 0} failures stored), expected attempt ${planned + 1} after ${planned} planned failures`,
    );
  } else if (i === gi && row.status === 'completed') {
    inv.expect(
      'attempts',
      highest === maxAttempts && kept?.failed === maxAttempts && kept?.last?.final === true,
      () =>
        `${where}: gave up with ${kept?.failed ?? 0} failures stored (final ${kept?.last?.final}), highest attempt ${highest}; expected all ${maxAttempts}`,
    );
  } else {
    inv.expect(
      'attempts',
      highest <= Math.min(planned + 1, maxAttempts),
      () =>
        `${where}: attempt ${highest} began, beyond the ${maxAttempts} allowed or the success planned at ${planned + 1}`,
    );
  }
  if (gi !== -1 && i > gi)
    inv.expect(
      'attempts',
      step.starts.length === 0,
      () => `${where}: began after step s${gi} had run out of attempts`,
    );
}

/** The shortest backoff the policy allows after the failure of attempt `n` (jitter takes off up to its share). */
function minBackoff(retry: RetryPlan, n: number): number {
  const base = Math.min(retry.maxDelayMs, retry.initialDelayMs * retry.backoffFactor ** Math.max(0, n - 1));
  return Math.floor(base * (1 - retry.jitter)) - 1;
}

/** The next attempt after the stored failure (begun by `s`) of attempt `n` waited for its backoff. */
function checkBackoff(e: TaskEvidence, step: StepLog, s: LogLine, n: number, { inv, out }: Judge): void {
  const failLine = step.fails.find((f) => f.run === s.run && f.n === n) as LogLine;
  const next = step.starts.find((x) => x.n === n + 1 && x.seq > failLine.seq);
  if (next === undefined) return;
  out.retries += 1;
  if (next.pid !== s.pid) out.retriesElsewhere += 1;
  const killed = e.killedSeq.get(s.pid);
  // Killed after the failure but perhaps before the wait was stored: the lease expiry, not the backoff, decides.
  if (killed !== undefined && killed > failLine.seq && killed < next.seq) return;
  const min = minBackoff(e.args.retry as RetryPlan, n);
  inv.expect(
    'waits',
    next.t - failLine.t >= min,
    () =>
      `${step.where}: attempt ${n + 1} began ${next.t - failLine.t} ms after attempt ${n} failed, before its backoff of at least ${min} ms`,
  );
}

function checkSleeps(e: TaskEvidence, result: ParsedResult | undefined, judge: Judge): void {
  const { args, row } = e;
  const planned = (args.sleeps ?? [])
    .map((ms, i): [string, number] => [`z${i}`, ms])
    .filter(([, ms], i) => ms > 0 && i < args.steps);
  for (const [name, ms] of planned) checkSleep(e, name, ms, judge);
  if (row.status === 'completed' && result?.isError === false) {
    let slept: unknown;
    try {
      slept = (JSON.parse(result.text as string) as { slept?: unknown }).slept;
    } catch {
      slept = undefined;
    }
    judge.inv.expect(
      'waits',
      JSON.stringify(slept) === JSON.stringify(planned.map(([name]) => name)),
      () =>
        `task ${row.id}: the result lists sleeps ${JSON.stringify(slept)}, planned ${JSON.stringify(planned)}`,
    );
  }
}

/** A sleep ends after its stored wake time, which the first run that got there fixed. */
function checkSleep(e: TaskEvidence, name: string, ms: number, { inv, out }: Judge): void {
  const starts = e.tl.filter((l) => l.event === 'sleep-start' && l.detail === name);
  const ends = e.tl.filter((l) => l.event === 'sleep-end' && l.detail === name);
  const memo = e.stored.get(name);
  const where = `task ${e.row.id} sleep ${name}`;
  const first = starts[0];
  const firstEnd = ends[0];
  if (firstEnd !== undefined) {
    out.sleeps += 1;
    if (!inv.expect('waits', typeof memo?.wakeAt === 'number', `${where} ended but no wake time is stored`))
      return;
    const wakeAt = memo?.wakeAt as number;
    if (first !== undefined && firstEnd.pid !== first.pid) out.sleepsElsewhere += 1;
    out.wakeLate?.push(firstEnd.t - wakeAt);
    for (const end of ends)
      inv.expect(
        'waits',
        end.t >= wakeAt,
        () => `${where} ended ${wakeAt - end.t} ms before its wake time (run ${end.run})`,
      );
  }
  if (memo === undefined || first === undefined) return;
  // The wake time counts from the first run that got there, and a replay does not push it back.
  const firstWait = starts.find((s) => {
    const end = e.runInfo.get(s.run)?.end;
    return end?.detail === 'wait' && !ends.some((x) => x.run === s.run);
  });
  const latest =
    firstWait === undefined ? Infinity : ((e.runInfo.get(firstWait.run) as RunView).end as LogLine).t + ms;
  const wakeAt = memo.wakeAt as number;
  inv.expect(
    'waits',
    wakeAt >= first.t + ms && wakeAt <= latest,
    () =>
      `${where}: wake time ${memo.wakeAt} outside [${first.t + ms}, ${latest}] (first reached at ${first.t}, ${ms} ms)`,
  );
}

/** The retries and sleeps the client read in statusMessage name the task's own steps, attempts and wake times. */
function checkSeen(e: TaskEvidence, rec: ClientRec | undefined, { inv, out }: Judge): void {
  const { args, row, stored } = e;
  for (const message of rec?.waitsSeen ?? []) {
    out.statusSeen += 1;
    const retry = RETRY_STATUS.exec(message);
    if (retry !== null) {
      const i = Number((retry[1] as string).slice(1));
      const n = Number(retry[2]);
      const planned = args.fails?.[i] ?? 0;
      const maxAttempts = args.retry?.maxAttempts ?? 1;
      inv.expect(
        'attempts',
        Number(retry[3]) === maxAttempts && n >= 2 && n <= Math.min(planned + 1, maxAttempts),
        () =>
          `task ${row.id}: the client was told "${message}" (${planned} failures planned, ${maxAttempts} attempts)`,
      );
      continue;
    }
    const at = Date.parse((SLEEP_STATUS.exec(message) as RegExpExecArray)[1] as string);
    const wakes = [...stored.values()].map((v) => v?.wakeAt).filter((w) => typeof w === 'number');
    inv.expect(
      'waits',
      wakes.includes(at),
      () =>
        `task ${row.id}: the client was told "${message}", but no sleep of the task is stored with that time`,
    );
  }
}
