// The checks of one task of a crash or clock section: its creation, its end, its runs (fencing, memoized steps,
// the single holder), its retries and sleeps, and the answers its result used.
import type { LogLine } from '../harness/log-tail.js';
import type { Analysis, AnalyseInput, Indexes } from './analysis-types.js';
import { checkDurable, type TaskEvidence } from './durable-check.js';
import type { ClientRec, JobArgs, RunView, TaskRow } from './types.js';

export const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
export const SWEEP_MS = 5_000;

interface TaskContext {
  input: AnalyseInput;
  ix: Indexes;
  out: Analysis;
  /** client id → the task it created, over the tasks checked so far. */
  seenCids: Map<string, string>;
}

/** The result text of a completed chaos_job: the run that ended it, the steps it saw, the answers it used. */
interface JobSummary {
  run: string;
  steps: { run: string; prev: string | null }[];
  answers: Record<string, string>;
}

const parseError = (row: TaskRow): { message?: string } | undefined =>
  row.error === null ? undefined : (JSON.parse(row.error) as { message?: string });

function summaryOf(row: TaskRow): JobSummary {
  const result = JSON.parse(row.result as string) as { content: { text: string }[] };
  return JSON.parse((result.content[0] as { text: string }).text) as JobSummary;
}

export function checkTask(row: TaskRow, ctx: TaskContext): void {
  const { input, ix, out } = ctx;
  const args = JSON.parse(row.args) as JobArgs;
  const rec = input.byTask.get(row.id);
  out.maxAttempt = Math.max(out.maxAttempt, Number(row.attempt));
  if (row.tool !== 'chaos_job') out.ttlProbes += 1;
  else if (row.status === 'completed') out.completed += 1;
  else if (row.status === 'cancelled') out.cancelled += 1;
  else if (row.status === 'failed') out.failed += 1;
  checkCreation(row, args, rec, ctx);
  if (!checkEnd(row, rec, input)) return;
  const tl = ix.linesByTask.get(row.id) ?? [];
  const { runs, runInfo } = runsOf(tl, out);
  countRuns(runs, runInfo, ix, out);
  const e: TaskEvidence = {
    row,
    args,
    tl,
    runInfo,
    stored: ix.stepsByTask.get(row.id) ?? new Map(),
    attempts: ix.attemptsByTask.get(row.id) ?? new Map(),
    killedSeq: ix.killedSeq,
  };
  checkMemo(e, out, input);
  const order = checkSingleHolder(e, runs, input);
  // Attempts and waits; a task whose step ran out of attempts was ended by the last run, giving up.
  const result =
    input.params.jumps !== undefined ? undefined : checkDurable(e, rec, { inv: input.inv, out: out.durable });
  if (result?.isError) {
    const lastRun = order[order.length - 1] as string;
    const last = runInfo.get(lastRun);
    input.inv.expect(
      'single-holder',
      last?.end?.detail === 'gave-up',
      () => `task ${row.id}: ended with an error, but its last run ${lastRun} ended ${last?.end?.detail}`,
    );
    return;
  }
  if (row.status === 'completed') checkResult(e, order, rec, ctx);
}

/** Handles and creation: every task comes from a tools/call the clients sent, one task per call. */
function checkCreation(row: TaskRow, args: JobArgs, rec: ClientRec | undefined, ctx: TaskContext): void {
  const { inv, sentCids, unknownCids } = ctx.input;
  const cid = args.cid as string;
  inv.expect('handles', sentCids.has(cid), `task ${row.id} carries client id ${cid} nobody sent`);
  if (ctx.seenCids.has(cid)) {
    inv.fail('handles', `one tools/call (${cid}) created two tasks: ${ctx.seenCids.get(cid)} and ${row.id}`);
  }
  ctx.seenCids.set(cid, row.id);
  if (rec === undefined) {
    inv.expect(
      'handles',
      unknownCids.has(cid),
      `task ${row.id} (${cid}) exists although its tools/call was answered with another handle`,
    );
  }
}

/** Terminal states (and TTL probes expired in time); false when the task needs no further checks. */
function checkEnd(row: TaskRow, rec: ClientRec | undefined, input: AnalyseInput): boolean {
  const { inv, params } = input;
  inv.expect('terminal', TERMINAL.has(row.status), `task ${row.id} (${row.tool}) is still ${row.status}`);
  if (row.tool !== 'chaos_job') {
    // TTL probes: failed as expired, within TTL + one sweep (+ slack for restarts)
    const error = parseError(row);
    const late = Number(row.updated_at) - Number(row.expires_at);
    // With clock jumps, creation and expiry may be stamped by clocks that were off by up to the largest offset.
    const skew = Math.max(0, ...(params.offsets ?? []).map((o) => 2 * Math.abs(o)));
    inv.expect(
      'stuck',
      row.status === 'failed' && error?.message === 'task expired' && late <= SWEEP_MS + 3_000 + skew,
      () => `TTL probe ${row.id} (${row.tool}): ${row.status} ${row.error} ${late} ms after its expiry`,
    );
    return false;
  }
  if (params.jumps !== undefined) {
    const error = parseError(row);
    inv.expect(
      'no-spurious-expiry',
      error?.message !== 'task expired',
      () =>
        `task ${row.id} (TTL one hour) expired although no clock was off by more than ${Math.max(...(params.offsets ?? []).map(Math.abs)) / 60_000} min`,
    );
  }
  const allowed = rec?.cancelSent === true ? ['completed', 'cancelled'] : ['completed'];
  inv.expect(
    'terminal',
    allowed.includes(row.status),
    () =>
      `task ${row.id} ended ${row.status}${row.error === null ? '' : ` ${row.error}`} (expected ${allowed.join('/')})`,
  );
  if (rec !== undefined) {
    inv.expect(
      'terminal',
      rec.final?.status === row.status,
      () =>
        `task ${row.id}: the client last saw ${rec.final?.status ?? rec.history.join('→')}, the store says ${row.status}`,
    );
    const firstTerminal = rec.history.findIndex((s) => TERMINAL.has(s));
    inv.expect(
      'terminal',
      firstTerminal === -1 || firstTerminal === rec.history.length - 1,
      () => `task ${row.id}: status left a terminal state: ${rec.history.join('→')}`,
    );
  }
  return true;
}

/** The runs of a task in log order, with their ends and the steps they finished and saved. */
function runsOf(tl: LogLine[], out: Analysis): { runs: string[]; runInfo: Map<string, RunView> } {
  const runs: string[] = [];
  const runInfo = new Map<string, RunView>();
  for (const l of tl) {
    if (l.event === 'run-start') {
      runs.push(l.run);
      runInfo.set(l.run, { start: l, end: undefined, pid: l.pid, ends: new Map(), saved: new Map() });
    }
    const info = runInfo.get(l.run);
    if (info === undefined) continue;
    if (l.event === 'run-end') {
      info.end = l;
      if (l.detail === 'lease-lost') out.leaseLost += 1;
    } else if (l.event === 'step-end') info.ends.set(l.detail, l);
    else if (l.event === 'step-saved') info.saved.set(l.detail, l);
  }
  out.runs += runs.length;
  return { runs, runInfo };
}

/** Why each run after the first began (answer, wait, crash), fenced runs, and replay delays after kills. */
function countRuns(runs: string[], runInfo: Map<string, RunView>, ix: Indexes, out: Analysis): void {
  for (let i = 1; i < runs.length; i++) {
    const prev = runInfo.get(runs[i - 1] as string) as RunView;
    const start = (runInfo.get(runs[i] as string) as RunView).start;
    if (prev.end?.detail === 'input') out.resumedRuns += 1;
    else if (prev.end?.detail === 'wait') out.resumedAfterWait += 1;
    else out.crashReplays += 1;
    // Was the previous run still going (its process alive, no end) when this one started? It must have been fenced.
    const prevKilled = ix.killedSeq.get(prev.pid);
    const prevOpen =
      (prev.end === undefined || prev.end.seq > start.seq) &&
      !(prevKilled !== undefined && prevKilled < start.seq);
    if (prevOpen) out.fencedRuns += 1;
    // How long a task interrupted by a kill waited for its replay (lease expiry, a free slot, a live worker).
    if (prev.end === undefined && prevKilled !== undefined && prevKilled < start.seq) {
      ix.replayDelays.push(start.t - (ix.killedAt.get(prev.pid) as number));
    }
  }
}

/** A committed step never runs again (a failed attempt is no commit; sleeps keep their wake time there). */
function checkMemo(e: TaskEvidence, out: Analysis, { inv }: AnalyseInput): void {
  const { row, tl, runInfo } = e;
  const committed = [...e.stored].filter(([name]) => /^s\d+$/.test(name));
  const starts = tl.filter((l) => l.event === 'step-start');
  const failedAttempts = tl.filter((l) => l.event === 'step-fail').length;
  out.stepExecutions += starts.length;
  out.stepsCommitted += committed.length;
  out.stepReruns += Math.max(0, starts.length - committed.length - failedAttempts);
  for (const [name, value] of committed) {
    const owner = runInfo.get(value.run as string);
    const endLine = owner?.ends.get(name);
    const where = `task ${row.id}: step ${name}`;
    if (
      !inv.expect(
        'memo',
        endLine !== undefined,
        `${where} stored from run ${value.run}, which never finished it`,
      )
    )
      continue;
    const savedLine = owner?.saved.get(name);
    for (const s of starts) {
      if (s.detail !== name || s.run === value.run) continue;
      if (savedLine !== undefined && s.seq > savedLine.seq) {
        inv.fail(
          'memo',
          `${where} ran again in run ${s.run} (pid ${s.pid}) after run ${value.run} had committed it`,
        );
      } else if ((runInfo.get(s.run)?.start.seq as number) > (endLine as LogLine).seq) {
        inv.fail(
          'memo',
          `${where} ran again in run ${s.run} (pid ${s.pid}), which started after run ${value.run} had finished and committed it`,
        );
      } else inv.ok('memo');
    }
    inv.ok('memo');
  }
}

/**
 * Single holder: no run committed a step after a newer run had claimed the task. With clock jumps a takeover can
 * follow a claim within milliseconds, so two runs may start in the opposite order of their claims; the one that
 * started later but holds the older claim is fenced from its first write. There, only runs that committed
 * something are known to be in claim order, and only those are compared. Returns the runs in claim order.
 */
function checkSingleHolder(e: TaskEvidence, runs: string[], { inv, params }: AnalyseInput): string[] {
  const { row, runInfo } = e;
  let resultRun: string | undefined;
  try {
    resultRun = row.status === 'completed' ? summaryOf(row).run : undefined;
  } catch {
    resultRun = undefined;
  }
  const view = (run: string): RunView => runInfo.get(run) as RunView;
  const order =
    params.jumps === undefined ? runs : runs.filter((r) => view(r).saved.size > 0 || r === resultRun);
  for (let i = 0; i + 1 < order.length; i++) {
    const a = view(order[i] as string);
    const nextStart = view(order[i + 1] as string).start.seq;
    for (const [name] of a.saved) {
      const end = a.ends.get(name);
      inv.expect(
        'single-holder',
        end === undefined || end.seq < nextStart,
        () =>
          `task ${row.id}: run ${order[i]} (pid ${a.pid}) committed step ${name} although run ${order[i + 1]} had claimed the task before that step's body returned`,
      );
    }
  }
  return order;
}

/** The stored result comes from the last run, over the stored step chain, with the answers the client sent. */
function checkResult(e: TaskEvidence, order: string[], rec: ClientRec | undefined, ctx: TaskContext): void {
  const { inv } = ctx.input;
  const { row, args, stored } = e;
  let summary: JobSummary;
  try {
    summary = summaryOf(row);
  } catch {
    inv.fail('single-holder', `task ${row.id}: unreadable result ${String(row.result).slice(0, 200)}`);
    return;
  }
  const lastRun = order[order.length - 1];
  inv.expect(
    'single-holder',
    summary.run === lastRun,
    () =>
      `task ${row.id}: the stored result comes from run ${summary.run}, but run ${lastRun} started after it`,
  );
  const storedChain = Array.from({ length: args.steps }, (_, i) => stored.get(`s${i}`));
  inv.expect(
    'single-holder',
    JSON.stringify(storedChain) === JSON.stringify(summary.steps),
    () =>
      `task ${row.id}: the result's steps ${JSON.stringify(summary.steps)} differ from the stored ${JSON.stringify(storedChain)}`,
  );
  inv.expect(
    'single-holder',
    summary.steps.every((s, i) => i === 0 || s.prev === summary.steps[i - 1]?.run),
    () => `task ${row.id}: broken step chain ${JSON.stringify(summary.steps)}`,
  );
  if (rec !== undefined) checkAnswers(row, args, summary, rec, ctx);
}

/** Every answer the task used is the one its client sent; every acknowledged answer is there. */
function checkAnswers(
  row: TaskRow,
  args: JobArgs,
  summary: JobSummary,
  rec: ClientRec,
  ctx: TaskContext,
): void {
  const { inv } = ctx.input;
  const expectedKeys = Array.from({ length: args.inputs }, (_, i) => `k${i}`);
  for (const key of expectedKeys) {
    ctx.out.answersChecked += 1;
    inv.expect(
      'answers',
      summary.answers[key] === rec.answers[key] && summary.answers[key] !== undefined,
      () =>
        `task ${row.id}: answer ${key} is ${JSON.stringify(summary.answers[key])}, the client sent ${JSON.stringify(rec.answers[key])}${rec.acked.has(key) ? ' (acknowledged)' : ''}`,
    );
  }
  for (const key of rec.acked) {
    inv.expect(
      'answers',
      key in summary.answers,
      `task ${row.id}: acknowledged answer ${key} missing from the result`,
    );
  }
  inv.expect(
    'answers',
    Object.keys(summary.answers).every((k) => expectedKeys.includes(k)),
    () => `task ${row.id}: unexpected answers ${JSON.stringify(summary.answers)}`,
  );
}
