// The durable-execution workload of the crash sections and its checks: steps that fail some attempts and are
// retried after a backoff, durable sleeps between steps, and tools/call retried under an idempotency key after a
// lost answer. Everything is judged from the per-attempt log of test/fixtures/tools/chaos-tools.mjs and the store.
import { percentile } from './lib.mjs';

export const DURABLE_INVARIANTS = {
  attempts:
    'attempts of a retried step are numbered 1, 2, … across runs and processes: attempt N+1 starts only after attempt N failed, no number is skipped, and a number runs again only where a kill, a lost lease or a failed store write interrupted it before its outcome was stored; the value committed is that of the first attempt planned to succeed, the store counts exactly the planned failures, and a step out of attempts ends the task completed with isError and its last error',
  waits:
    'a sleep never ends before its wake time, which the first run that waited fixed (a replay does not restart it); a retry never starts before its backoff has passed (unless the process was killed before it stored the wait); the waits clients were told of are the stored ones',
  idempotent:
    'a tools/call retried with the same idempotency key (after a kill mid-create, an answer dropped on purpose, or sent to two processes at once) makes one task: every key maps to exactly one task in the store, no task of the same call exists without it, and every answer the client got named that task',
};

/** The message of a planned failure, as the fixture words it (and the isError result carries it). */
export const plannedFailure = (name, attempt) => `planned failure of ${name}, attempt ${attempt}`;

/** Run ends that stop an attempt before its outcome is stored (the runtime tries the same number again). */
const INTERRUPTIONS = new Set(['lease-lost', 'store-unavailable', 'aborted']);
const RETRY_STATUS = /^Retrying step "(s\d+)" \(attempt (\d+)(?: of (\d+))?\) at (.+)\.$/;
const SLEEP_STATUS = /^Sleeping until (.+)\.$/;

/**
 * The retries and sleeps of one chaos_job, drawn from the section's parameters (the clock sections have none):
 * `fails` (planned failed attempts per step), `retry` (short backoffs, so that waits cross kills and processes;
 * some tasks get fewer attempts than they need and must give up), `sleeps` (ms after each step, 0 for none).
 */
export function planDurable(rng, params, steps) {
  const out = {};
  const some = (draw) => {
    const list = Array.from({ length: steps }, () => (rng.chance(0.5) ? draw() : 0));
    if (list.every((v) => v === 0)) list[rng.int(0, steps - 1)] = draw();
    return list;
  };
  if (rng.chance(params.retryRate ?? 0)) {
    out.fails = some(() => rng.int(1, params.failMax));
    const most = Math.max(...out.fails);
    out.retry = {
      maxAttempts: rng.chance(params.giveUpRate) ? most : most + rng.int(1, 2),
      initialDelayMs: rng.int(params.backoffMinMs, Math.max(params.backoffMinMs, params.backoffMaxMs / 2)),
      backoffFactor: 2,
      maxDelayMs: params.backoffMaxMs,
      jitter: 0.2,
    };
  }
  if (rng.chance(params.sleepRate ?? 0))
    out.sleeps = some(() => rng.int(params.sleepMsMin, params.sleepMsMax));
  return out;
}

/** The step that runs out of attempts (its index), or -1 when every step gets the attempts it needs. */
export const giveUpStep = (args) =>
  args.retry === undefined
    ? -1
    : Array.from({ length: args.steps }, (_, i) => args.fails?.[i] ?? 0).findIndex(
        (f) => f >= args.retry.maxAttempts,
      );

/** The shortest backoff the policy allows after the failure of attempt `n` (jitter takes off up to its share). */
function minBackoff(retry, n) {
  const base = Math.min(retry.maxDelayMs, retry.initialDelayMs * retry.backoffFactor ** Math.max(0, n - 1));
  return Math.floor(base * (1 - retry.jitter)) - 1;
}

/** What the client saw of a task's waits, from statusMessage: kept to be compared with the store afterwards. */
export function noteStatus(rec, message) {
  if (typeof message !== 'string') return;
  if (RETRY_STATUS.test(message) || SLEEP_STATUS.test(message)) (rec.waitsSeen ??= new Set()).add(message);
}

/** The figures of the durable workload a section reports. */
export function newDurableStats() {
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

/**
 * Checks one chaos_job against the attempts and waits invariants. `tl`: its log lines; `runInfo`: run → {start,
 * end, pid}; `stored`: step and sleep memos; `attempts`: name → {failed, last} of task_step_attempts; `killedSeq`:
 * pid → seq of its kill line. Returns the parsed isError text, if the task ended with one.
 */
export function checkDurable({ row, args, tl, runInfo, stored, attempts, killedSeq, rec, inv, out }) {
  const gi = giveUpStep(args);
  if (args.fails !== undefined) out.retryTasks += 1;
  if (args.sleeps !== undefined) out.sleepTasks += 1;
  const result = row.status === 'completed' ? parseResult(row.result) : undefined;
  for (let i = 0; i < args.steps; i++)
    checkStep({ i, gi, args, tl, runInfo, stored, attempts, killedSeq, row, inv, out });
  if (row.status === 'completed') {
    const expected = gi === -1 ? undefined : plannedFailure(`s${gi}`, args.retry.maxAttempts);
    if (gi !== -1) out.gaveUp += 1;
    inv.expect(
      'attempts',
      gi === -1 ? result?.isError !== true : result?.isError === true && result.text === expected,
      () =>
        `task ${row.id}: ${gi === -1 ? 'no step runs out of attempts, but the task ended with an error' : `step s${gi} runs out of attempts, expected the isError result "${expected}"`}: ${String(row.result).slice(0, 200)}`,
    );
  }
  checkSleeps({ args, tl, runInfo, stored, row, result, inv, out });
  checkSeen({ rec, args, stored, row, inv, out });
  return result;
}

function parseResult(text) {
  try {
    const r = JSON.parse(text);
    return { isError: r.isError === true, text: r.content?.[0]?.text };
  } catch {
    return undefined;
  }
}

/** How the attempt that `s` (a step-start line) began ended: stored (saved or failed), or interrupted. */
function outcomeOf(s, tl, runInfo, killedSeq) {
  const same = (event) => tl.some((l) => l.event === event && l.run === s.run && l.detail === s.detail);
  if (same('step-saved')) return 'saved';
  const end = runInfo.get(s.run)?.end;
  // The fixture sees the WaitPending (or the final error) only after the runtime stored the failure.
  if (same('step-fail') && (end?.detail === 'wait' || end?.detail === 'gave-up')) return 'failed';
  if (end === undefined) return (killedSeq.get(s.pid) ?? -1) > s.seq ? 'interrupted' : 'never ended';
  return INTERRUPTIONS.has(end.detail) ? 'interrupted' : `run ended ${end.detail}`;
}

function checkStep({ i, gi, args, tl, runInfo, stored, attempts, killedSeq, row, inv, out }) {
  const name = `s${i}`;
  const planned = args.fails?.[i] ?? 0;
  const maxAttempts = args.retry?.maxAttempts ?? 1;
  const starts = tl.filter((l) => l.event === 'step-start' && l.detail === name);
  const fails = tl.filter((l) => l.event === 'step-fail' && l.detail === name);
  out.failedAttempts += fails.length;
  const where = `task ${row.id} step ${name}`;
  const byNumber = new Map();
  for (const s of starts) {
    // No gap: attempt N+1 begins only after attempt N failed (in whichever run or process).
    inv.expect(
      'attempts',
      s.n === 1 || fails.some((f) => f.n === s.n - 1 && f.seq < s.seq),
      () => `${where}: attempt ${s.n} began (run ${s.run}) before any attempt ${s.n - 1} had failed`,
    );
    if (!byNumber.has(s.n)) byNumber.set(s.n, []);
    byNumber.get(s.n).push({ s, outcome: outcomeOf(s, tl, runInfo, killedSeq) });
  }
  for (const [n, list] of byNumber) {
    out.repeatedAttempts += list.length - 1;
    const stored = list.filter((a) => a.outcome === 'saved' || a.outcome === 'failed');
    inv.expect(
      'attempts',
      stored.length <= 1,
      () => `${where}: attempt ${n} ran to a stored outcome ${stored.length} times`,
    );
    for (const a of list) {
      if (a.outcome === 'saved' || a.outcome === 'failed') continue;
      inv.expect(
        'attempts',
        a.outcome === 'interrupted',
        () => `${where}: attempt ${n} in run ${a.s.run} (pid ${a.s.pid}) has no stored outcome: ${a.outcome}`,
      );
    }
    // A failure once stored is never tried again: runs that start after it begin at N+1.
    for (const a of list) {
      if (a.outcome !== 'failed') continue;
      const endSeq = runInfo.get(a.s.run).end.seq;
      for (const later of starts) {
        if (later.n > n || runInfo.get(later.run).start.seq < endSeq) continue;
        inv.fail(
          'attempts',
          `${where}: attempt ${later.n} ran again in run ${later.run} after attempt ${n} was stored as failed`,
        );
      }
      checkBackoff({ a, n, args, starts, fails, killedSeq, where, inv, out });
    }
  }
  const highest = Math.max(0, ...starts.map((s) => s.n));
  const kept = attempts.get(name);
  const value = stored.get(name);
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
      starts.length === 0,
      () => `${where}: began after step s${gi} had run out of attempts`,
    );
}

/** The next attempt after the stored failure `a` of attempt `n` waited for its backoff. */
function checkBackoff({ a, n, args, starts, fails, killedSeq, where, inv, out }) {
  const failLine = fails.find((f) => f.run === a.s.run && f.n === n);
  const next = starts.find((s) => s.n === n + 1 && s.seq > failLine.seq);
  if (next === undefined) return;
  out.retries += 1;
  if (next.pid !== a.s.pid) out.retriesElsewhere += 1;
  const killed = killedSeq.get(a.s.pid);
  // Killed after the failure but perhaps before the wait was stored: the lease expiry, not the backoff, decides.
  if (killed !== undefined && killed > failLine.seq && killed < next.seq) return;
  const min = minBackoff(args.retry, n);
  inv.expect(
    'waits',
    next.t - failLine.t >= min,
    () =>
      `${where}: attempt ${n + 1} began ${next.t - failLine.t} ms after attempt ${n} failed, before its backoff of at least ${min} ms`,
  );
}

function checkSleeps({ args, tl, runInfo, stored, row, result, inv, out }) {
  const planned = (args.sleeps ?? [])
    .map((ms, i) => [`z${i}`, ms])
    .filter(([, ms], i) => ms > 0 && i < args.steps);
  for (const [name, ms] of planned) {
    const starts = tl.filter((l) => l.event === 'sleep-start' && l.detail === name);
    const ends = tl.filter((l) => l.event === 'sleep-end' && l.detail === name);
    const memo = stored.get(name);
    const where = `task ${row.id} sleep ${name}`;
    if (ends.length > 0) {
      out.sleeps += 1;
      if (!inv.expect('waits', typeof memo?.wakeAt === 'number', `${where} ended but no wake time is stored`))
        continue;
      if (starts[0] !== undefined && ends[0].pid !== starts[0].pid) out.sleepsElsewhere += 1;
      out.wakeLate.push(ends[0].t - memo.wakeAt);
      for (const e of ends)
        inv.expect(
          'waits',
          e.t >= memo.wakeAt,
          () => `${where} ended ${memo.wakeAt - e.t} ms before its wake time (run ${e.run})`,
        );
    }
    if (memo === undefined || starts.length === 0) continue;
    // The wake time counts from the first run that got there, and a replay does not push it back.
    const firstWait = starts.find((s) => {
      const end = runInfo.get(s.run)?.end;
      return end?.detail === 'wait' && !ends.some((e) => e.run === s.run);
    });
    const latest = firstWait === undefined ? Infinity : runInfo.get(firstWait.run).end.t + ms;
    inv.expect(
      'waits',
      memo.wakeAt >= starts[0].t + ms && memo.wakeAt <= latest,
      () =>
        `${where}: wake time ${memo.wakeAt} outside [${starts[0].t + ms}, ${latest}] (first reached at ${starts[0].t}, ${ms} ms)`,
    );
  }
  if (row.status === 'completed' && result?.isError === false) {
    let slept;
    try {
      slept = JSON.parse(result.text).slept;
    } catch {
      slept = undefined;
    }
    inv.expect(
      'waits',
      JSON.stringify(slept) === JSON.stringify(planned.map(([name]) => name)),
      () =>
        `task ${row.id}: the result lists sleeps ${JSON.stringify(slept)}, planned ${JSON.stringify(planned)}`,
    );
  }
}

/** The retries and sleeps the client read in statusMessage name the task's own steps, attempts and wake times. */
function checkSeen({ rec, args, stored, row, inv, out }) {
  for (const message of rec?.waitsSeen ?? []) {
    out.statusSeen += 1;
    const retry = RETRY_STATUS.exec(message);
    if (retry !== null) {
      const i = Number(retry[1].slice(1));
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
    const at = Date.parse(SLEEP_STATUS.exec(message)[1]);
    const wakes = [...stored.values()].map((v) => v?.wakeAt).filter((w) => typeof w === 'number');
    inv.expect(
      'waits',
      wakes.includes(at),
      () =>
        `task ${row.id}: the client was told "${message}", but no sleep of the task is stored with that time`,
    );
  }
}

/** Every key a client sent maps to one task, the one its answers named; no task of a keyed call lacks its key. */
export function checkKeys({ tasks, recs, inv }) {
  const byKey = new Map();
  const byCid = new Map();
  for (const row of tasks) {
    const cid = JSON.parse(row.args).cid;
    if (!byCid.has(cid)) byCid.set(cid, []);
    byCid.get(cid).push(row);
    if (row.idempotency_key === null || row.idempotency_key === undefined) continue;
    if (!byKey.has(row.idempotency_key)) byKey.set(row.idempotency_key, []);
    byKey.get(row.idempotency_key).push(row);
  }
  const used = new Set();
  let duplicates = 0;
  for (const rec of recs) {
    if (rec.key === undefined || rec.taskId === undefined) continue;
    used.add(rec.key);
    const keyed = byKey.get(rec.key) ?? [];
    const same = byCid.get(rec.cid) ?? [];
    duplicates += Math.max(0, same.length - 1);
    inv.expect(
      'idempotent',
      keyed.length === 1 && keyed[0].id === rec.taskId,
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
      rec.seenIds.size === 1,
      () =>
        `call ${rec.cid} (key ${rec.key}) was answered with several tasks: ${[...rec.seenIds].join(', ')}`,
    );
  }
  for (const [key, rows] of byKey)
    inv.expect(
      'idempotent',
      used.has(key),
      () => `task ${rows[0].id} carries key ${key}, which no client holds`,
    );
  return duplicates;
}

/** How late sleeps woke (the first end after the stored wake time), for the report. */
export const wakeLateness = (out) => ({
  n: out.wakeLate.length,
  p50: percentile(out.wakeLate, 50),
  p99: percentile(out.wakeLate, 99),
});
