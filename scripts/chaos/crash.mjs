// Section 1, crash chaos: several `serve` processes share one store (a SQLite file or a PostgreSQL schema) and run
// durable tasks with memoized steps, input requests, steps that fail and are retried, and durable sleeps, while a
// driver SIGKILLs them at chosen points (mid-step, right after a step body returned = mid-commit, right after an
// attempt failed = mid-retry, right after a run ended = mid-finish/suspend/wait, while a tasks/update or tools/call
// is in flight, during start-up, or at random) and restarts them. Clients keep creating (most of them under an
// idempotency key, retried after lost or deliberately dropped answers), polling, answering and cancelling through
// whichever processes are up. Afterwards the store and the per-attempt log (test/fixtures/tools/chaos-tools.mjs)
// are checked against the invariants below.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  checkDurable,
  checkKeys,
  DURABLE_INVARIANTS,
  newDurableStats,
  noteStatus,
  planDurable,
  wakeLateness,
} from './durable.mjs';
import {
  appendLog,
  CHAOS_TOOLS,
  COMMON_SERVE_FLAGS,
  crashExcerpt,
  fmtInt,
  Invariants,
  LogTail,
  now,
  percentile,
  pgQuery,
  pgSchema,
  rng as makeRng,
  rpc,
  sleep,
  startServe,
} from './lib.mjs';

export const CRASH_INVARIANTS = {
  terminal:
    'every task reaches exactly one terminal state (completed, or cancelled when a cancel was sent); every later read returns the same snapshot',
  memo: 'a memoized step whose completion was committed never runs again (a failed attempt is no commit: its retry is not a re-run)',
  'single-holder':
    'no two runs held a task at once: no run committed after a newer run had claimed the task, the run whose result was stored is the last one that started, and the stored steps are the chain the result saw',
  answers: 'no answer acknowledged by tasks/update is lost or altered',
  handles: 'every task handle returned by tools/call exists; no tools/call created two tasks',
  stuck:
    'nothing stuck: all tasks terminal (none left working in a retry backoff or a sleep) within lease + work + waits + slack after the last kill; TTL probes failed as expired within TTL + sweep',
  'no-crash': 'no server process exits unless killed by the driver',
  kills: 'the planned number of kills was reached within the time bound',
  ...DURABLE_INVARIANTS,
};

// The clock section: the same processes, clients and checks, with wall-clock jumps of the processes instead of kills
// (and without retries, sleeps or idempotency keys: their times are only comparable on one clock).
export const CLOCK_INVARIANTS = {
  ...Object.fromEntries(
    Object.entries(CRASH_INVARIANTS).filter(([name]) => name !== 'kills' && !(name in DURABLE_INVARIANTS)),
  ),
  stuck:
    'nothing stuck: all tasks terminal within lease + work + slack after the last jump; TTL probes failed as expired within TTL + sweep + the largest clock offset',
  'no-spurious-expiry':
    "no task expires that the jumps did not make expire (every jump stays well inside the tasks' one-hour TTL)",
  jumps: 'the planned number of clock jumps was made within the time bound',
};

const IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';
const CLOCK_SHIM = join(dirname(fileURLToPath(import.meta.url)), 'clock-shift.mjs');
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const SWEEP_MS = 5_000;

const show = (r) =>
  r.netError !== undefined
    ? `network error ${r.netError}`
    : r.error !== undefined
      ? `HTTP ${r.status} error ${r.error.code} ${r.error.message}`
      : r.badBody !== undefined
        ? `HTTP ${r.status} body ${r.badBody.slice(0, 120)}`
        : `HTTP ${r.status} ${JSON.stringify(r.result).slice(0, 200)}`;

/**
 * Answers a client may simply retry while processes are killed: no connection, a cut body, or -32603 "Task store
 * unavailable" (HTTP 500). Any other error is a finding.
 */
const transient = (r) =>
  r.netError !== undefined ||
  r.badBody !== undefined ||
  (r.status === 500 && r.error?.code === -32603 && /^Task store unavailable: /.test(String(r.error.message)));

const strip = (t) => JSON.stringify({ ...t, _meta: undefined });

export async function runCrash({ backend, params, scope, seed, pgUrl, progress }) {
  const inv = new Invariants();
  const jumping = params.jumps !== undefined;
  for (const [name, description] of Object.entries(jumping ? CLOCK_INVARIANTS : CRASH_INVARIANTS))
    inv.define(name, description);
  const rng = makeRng(seed);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-crash-');
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  let storeArgs;
  let schema;
  if (backend === 'sqlite') {
    storeArgs = ['--store', join(dir, 'tasks.db')];
  } else {
    schema = pgSchema(scope, pgUrl, 'crash');
    storeArgs = ['--store', pgUrl, '--pg-schema', schema, '--pg-pool-size', '4'];
  }
  const serveArgs = [
    ...COMMON_SERVE_FLAGS,
    ...storeArgs,
    '--tools',
    CHAOS_TOOLS,
    '--lease-ms',
    String(params.leaseMs),
    '--concurrency',
    String(params.concurrency),
  ];
  const env = { DURABLE_MCP_TEST_LOG: logFile };

  const stats = {
    kills: 0,
    killsByPoint: {},
    restarts: 0,
    startFailures: 0,
    tasks: 0,
    orphansAdopted: 0,
    createRetries: 0,
    transient: {},
    answersSent: 0,
    answersAcked: 0,
    cancelsAcked: 0,
    ttlProbes: 0,
    keys: { keyed: 0, hedged: 0, dropped: {}, lostToKills: 0, retried: 0, joined: 0 },
  };
  const countTransient = (r) => {
    const key =
      r.netError !== undefined
        ? r.netError
        : r.badBody !== undefined
          ? 'cut body'
          : `${r.error?.code} ${String(r.error?.message).slice(0, 60)}`;
    stats.transient[key] = (stats.transient[key] ?? 0) + 1;
  };

  // ----- processes
  let chaosOn = true;
  let hardStop = false;
  const slots = Array.from({ length: params.servers }, (_, i) => ({
    i,
    proc: undefined,
    restartTimer: undefined,
    clockFile: jumping ? join(dir, `clock-${i}`) : undefined,
    offset: 0,
  }));
  for (const slot of slots) if (slot.clockFile !== undefined) writeFileSync(slot.clockFile, '0');
  const unplanned = [];
  const startSlot = (slot) => {
    const proc = startServe(
      scope,
      serveArgs,
      slot.clockFile === undefined
        ? { env, timeoutMs: 30_000 }
        : {
            env: { ...env, DURABLE_MCP_CHAOS_CLOCK: slot.clockFile },
            nodeArgs: ['--import', CLOCK_SHIM],
            timeoutMs: 30_000,
          },
    );
    slot.proc = proc;
    void proc.exited.then(() => {
      if (!proc.doomed && !hardStop) {
        unplanned.push(`pid ${proc.pid} exited on its own: ${crashExcerpt(proc.stderr())}`);
        scheduleRestart(slot, 100);
      }
    });
    proc.started.catch((err) => {
      if (!proc.doomed && !hardStop) {
        stats.startFailures += 1;
        unplanned.push(`a server failed to start: ${err.message.slice(0, 1_500)}`);
      }
    });
    return proc;
  };
  const scheduleRestart = (slot, delay) => {
    if (hardStop || slot.restartTimer !== undefined) return;
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (hardStop || scope.closed) return;
      stats.restarts += 1;
      startSlot(slot);
    }, delay);
  };
  const live = () => slots.filter((s) => s.proc?.ready && !s.proc.dead && !s.proc.doomed);
  const slotOfPid = (pid) => slots.find((s) => s.proc?.pid === pid && !s.proc.dead && !s.proc.doomed);
  const pickLive = async (accept = () => true) => {
    for (;;) {
      if (hardStop || scope.closed) return undefined;
      const l = live().filter(accept);
      if (l.length > 0) return rng.pick(l);
      await sleep(20);
    }
  };

  const kills = [];
  const kill = async (slot, point, info = {}) => {
    const proc = slot?.proc;
    if (proc === undefined || proc.dead || proc.doomed) return false;
    proc.doomed = true;
    proc.child.kill('SIGKILL');
    await proc.exited;
    appendLog(logFile, 'killed', proc.pid);
    kills.push({ point, pid: proc.pid, t: now(), ...info });
    stats.kills += 1;
    stats.killsByPoint[point] = (stats.killsByPoint[point] ?? 0) + 1;
    if (chaosOn) scheduleRestart(slot, rng.int(params.restartMinMs, params.restartMaxMs));
    else scheduleRestart(slot, 0);
    return true;
  };

  for (const slot of slots) startSlot(slot);
  await Promise.all(slots.map((s) => s.proc.started));

  // ----- the log, read as it grows
  const tail = new LogTail(logFile);
  const activeSteps = new Map();
  const waiters = new Set();
  const pump = () => {
    for (const line of tail.read()) {
      if (line.event === 'step-start') activeSteps.set(`${line.task}/${line.run}/${line.detail}`, line);
      else if (line.event === 'step-end' || line.event === 'step-fail')
        activeSteps.delete(`${line.task}/${line.run}/${line.detail}`);
      else if (line.event === 'run-end') {
        for (const [k, v] of activeSteps) if (v.run === line.run) activeSteps.delete(k);
      } else if (line.event === 'killed') {
        for (const [k, v] of activeSteps) if (v.pid === line.pid) activeSteps.delete(k);
      }
      for (const w of waiters) {
        if (w.match(line)) {
          waiters.delete(w);
          w.resolve(line);
        }
      }
    }
  };
  const pumpTimer = setInterval(pump, 3);
  scope.defer(() => clearInterval(pumpTimer));
  const waitLine = (match, timeoutMs) =>
    new Promise((resolveWait) => {
      const w = { match, resolve: resolveWait };
      waiters.add(w);
      setTimeout(() => {
        if (waiters.delete(w)) resolveWait(undefined);
      }, timeoutMs);
    });
  const livePid = (pid) => slotOfPid(pid) !== undefined;

  // ----- hooks: kill the process a request was just sent to
  const hooks = { create: undefined, update: undefined };
  const armHook = (kind, timeoutMs) =>
    new Promise((resolveHook) => {
      const timer = setTimeout(() => {
        hooks[kind] = undefined;
        resolveHook(undefined);
      }, timeoutMs);
      hooks[kind] = (slot) => {
        hooks[kind] = undefined;
        clearTimeout(timer);
        resolveHook(slot);
      };
    });

  // ----- clients
  const recs = [];
  const byTask = new Map();
  const sentCids = new Set();
  const unknownCids = new Set();
  let serial = 0;
  const newRec = (tool = 'chaos_job') => {
    const steps = rng.int(params.stepsMin, params.stepsMax);
    const job = tool === 'chaos_job';
    const rec = {
      cid: `${backend[0]}${serial++}`,
      tool,
      args: job
        ? {
            steps,
            inputs: Math.min(steps, rng.int(0, params.inputsMax)),
            ms: rng.int(params.stepMsMin, params.stepMsMax),
            spinMs: 6,
            ...planDurable(rng, params, steps),
          }
        : {},
      cancelAfterMs: job && rng.chance(params.cancelRate) ? rng.int(30, params.stepMsMax * 6) : undefined,
      history: [],
      answers: {},
      acked: new Set(),
    };
    if (job && rng.chance(params.keyRate ?? 0)) planKeyed(rec);
    recs.push(rec);
    return rec;
  };

  // A keyed client: the same arguments and key on every try; some answers dropped on purpose (the request torn
  // down right after its body was sent, a little later, or when the answer begins), some first tries sent to two
  // processes at once.
  const planKeyed = (rec) => {
    rec.key = `${rec.cid}-${rng.hex(12)}`;
    rec.seenIds = new Set();
    const drops = rng.chance(params.dropRate) ? rng.int(1, 2) : 0;
    rec.drops = Array.from({ length: drops }, () =>
      rng.pick([{ afterMs: 0 }, { afterMs: rng.int(1, 40) }, { afterMs: 60_000 }]),
    );
    rec.hedge = rng.chance(params.hedgeRate);
  };

  const call = async (method, args, hook, accept, options = {}) => {
    const slot = await pickLive(accept);
    if (slot === undefined) return { netError: 'stopped' };
    const pending = rpc(slot.proc.url, method, args, { timeoutMs: 20_000, ...options });
    if (hook !== undefined) hooks[hook]?.(slot);
    return pending;
  };

  const answer = async (rec, requests) => {
    const responses = {};
    for (const key of Object.keys(requests ?? {})) {
      if (rec.acked.has(key)) {
        inv.fail(
          'answers',
          `task ${rec.taskId}: key ${key} is outstanding again after tasks/update acknowledged it (answer lost)`,
        );
      }
      rec.answers[key] ??= `${rec.cid}:${key}:${rng.hex(6)}`;
      responses[key] = { action: 'accept', content: { v: rec.answers[key] } };
    }
    if (Object.keys(responses).length === 0) return;
    for (let attempt = 0; attempt < 50 && !hardStop; attempt++) {
      stats.answersSent += 1;
      const r = await call('tasks/update', { taskId: rec.taskId, inputResponses: responses }, 'update');
      if (r.result !== undefined) {
        for (const key of Object.keys(responses)) rec.acked.add(key);
        stats.answersAcked += 1;
        return;
      }
      if (!transient(r)) {
        inv.fail('answers', `tasks/update ${rec.taskId}: ${show(r)}`);
        return;
      }
      countTransient(r);
      await sleep(30);
    }
  };

  const driveTask = async (rec) => {
    if (rec.key === undefined) await createPlain(rec);
    else await createKeyed(rec);
    if (rec.taskId !== undefined) await followTask(rec);
  };

  const createPlain = async (rec) => {
    // Without a key, a lost answer means: the task may or may not exist; try again under a new client id.
    for (let attempt = 0; ; attempt++) {
      if (hardStop || scope.closed) return;
      const cid = attempt === 0 ? rec.cid : `${rec.cid}.${attempt}`;
      sentCids.add(cid);
      // A process whose clock runs ahead stamps a later expiry: TTL probes are created where the clock is not ahead,
      // so that they are due within the run (a clock behind makes them due sooner, which the check allows for).
      const accept = jumping && rec.tool !== 'chaos_job' ? (s) => s.offset <= 0 : undefined;
      const r = await call(
        'tools/call',
        { name: rec.tool, arguments: { ...rec.args, cid } },
        'create',
        accept,
      );
      if (r.result?.resultType === 'task' && typeof r.result.taskId === 'string') {
        rec.taskId = r.result.taskId;
        rec.cidUsed = cid;
        rec.pollMs = r.result.pollIntervalMs ?? 100;
        break;
      }
      if (!transient(r)) {
        inv.fail('handles', `tools/call ${rec.tool} (${cid}): ${show(r)}`);
        return;
      }
      countTransient(r);
      unknownCids.add(cid);
      stats.createRetries += 1;
      await sleep(30);
    }
  };

  // With a key, a lost answer is simply asked again: the same arguments and key must give the same task.
  const createKeyed = async (rec) => {
    sentCids.add(rec.cid);
    stats.keys.keyed += 1;
    const request = { name: rec.tool, arguments: { ...rec.args, cid: rec.cid } };
    const meta = { [IDEMPOTENCY_KEY]: rec.key };
    for (let attempt = 0; attempt < 500; attempt++) {
      if (hardStop || scope.closed) return;
      const options = { meta, drop: rec.drops[attempt] };
      const sentAt = now();
      let tries;
      if (attempt === 0 && rec.hedge) {
        // Two processes at once (one, if only one is up): concurrent creations under one key.
        stats.keys.hedged += 1;
        const first = await pickLive();
        const others = live().filter((s) => s !== first);
        const second = others.length > 0 ? rng.pick(others) : first;
        tries = [first, second].map((slot, i) =>
          call(
            'tools/call',
            request,
            i === 0 ? 'create' : undefined,
            (s) => s === slot,
            i === 0 ? options : { meta },
          ),
        );
      } else tries = [call('tools/call', request, 'create', undefined, options)];
      let answer;
      for (const r of await Promise.all(tries)) {
        if (r.result?.resultType === 'task' && typeof r.result.taskId === 'string') {
          rec.seenIds.add(r.result.taskId);
          answer ??= r.result;
        } else if (r.netError === 'dropped') {
          stats.keys.dropped[r.droppedAt] = (stats.keys.dropped[r.droppedAt] ?? 0) + 1;
        } else if (transient(r)) {
          countTransient(r);
          if (r.netError !== 'ECONNREFUSED' && r.netError !== 'stopped') stats.keys.lostToKills += 1;
        } else {
          inv.fail('idempotent', `tools/call ${rec.tool} (${rec.cid}, key ${rec.key}): ${show(r)}`);
          return;
        }
      }
      if (answer !== undefined) {
        rec.taskId = answer.taskId;
        rec.cidUsed = rec.cid;
        rec.pollMs = answer.pollIntervalMs ?? 100;
        // Created by an earlier try whose answer was lost: this answer joined it.
        if (attempt > 0 && Date.parse(answer.createdAt) < sentAt) stats.keys.joined += 1;
        return;
      }
      stats.keys.retried += 1;
      await sleep(30);
    }
    inv.fail('idempotent', `tools/call ${rec.tool} (${rec.cid}, key ${rec.key}): no answer after 500 tries`);
  };

  const followTask = async (rec) => {
    byTask.set(rec.taskId, rec);
    stats.tasks += 1;
    rec.createdAt ??= now();
    const cancelAt = rec.cancelAfterMs === undefined ? undefined : rec.createdAt + rec.cancelAfterMs;
    for (;;) {
      await sleep(rec.pollMs);
      if (hardStop || scope.closed) return;
      if (cancelAt !== undefined && !rec.cancelAcked && now() >= cancelAt) {
        const c = await call('tasks/cancel', { taskId: rec.taskId });
        rec.cancelSent = true;
        if (c.result !== undefined) {
          rec.cancelAcked = true;
          stats.cancelsAcked += 1;
        } else if (!transient(c)) inv.fail('terminal', `tasks/cancel ${rec.taskId}: ${show(c)}`);
      }
      const r = await call('tasks/get', { taskId: rec.taskId });
      if (transient(r)) {
        countTransient(r);
        continue;
      }
      if (r.error !== undefined) {
        if (rec.tool !== 'chaos_job' && /expired/i.test(r.error.message)) {
          rec.expiredSeenAt = now();
          return;
        }
        inv.fail('handles', `tasks/get ${rec.taskId} (a handle tools/call returned): ${show(r)}`);
        return;
      }
      const t = r.result;
      if (rec.history[rec.history.length - 1] !== t.status) rec.history.push(t.status);
      noteStatus(rec, t.statusMessage);
      if (TERMINAL.has(t.status)) {
        rec.final = t;
        rec.finalAt = now();
        break;
      }
      if (t.status === 'input_required' && rec.tool === 'chaos_job') await answer(rec, t.inputRequests);
    }
    // A terminal snapshot never changes, whichever process serves it.
    for (let i = 0; i < 2 && !hardStop; i++) {
      const r = await call('tasks/get', { taskId: rec.taskId });
      if (transient(r)) {
        countTransient(r);
        continue;
      }
      inv.expect(
        'terminal',
        r.result !== undefined && strip(r.result) === strip(rec.final),
        () =>
          `task ${rec.taskId}: a later read differs from the terminal snapshot: ${show(r)} vs ${strip(rec.final)}`,
      );
    }
  };

  // Tasks whose tools/call answer was lost exist all the same: adopt them (poll and answer like the others).
  const storeTasks = async () => {
    if (backend === 'sqlite') {
      const db = new Database(join(dir, 'tasks.db'), { fileMustExist: true });
      try {
        db.pragma('busy_timeout = 5000');
        return db.prepare('SELECT id, tool, args FROM tasks').all();
      } finally {
        db.close();
      }
    }
    return pgQuery(pgUrl, `SELECT id, tool, args FROM ${pg.escapeIdentifier(schema)}.tasks`);
  };
  const drivers = new Set();
  const track = (p) => {
    drivers.add(p);
    void p.finally(() => drivers.delete(p));
  };
  const adoptOrphans = async () => {
    let rows;
    try {
      rows = await storeTasks();
    } catch {
      return;
    }
    for (const row of rows) {
      if (byTask.has(row.id)) continue;
      const args = JSON.parse(row.args);
      if (!unknownCids.has(args.cid)) continue; // its creator may still be waiting for the answer
      const rec = {
        cid: args.cid,
        cidUsed: args.cid,
        tool: row.tool,
        args,
        orphan: true,
        taskId: row.id,
        pollMs: 100,
        history: [],
        answers: {},
        acked: new Set(),
      };
      recs.push(rec);
      stats.orphansAdopted += 1;
      track(followTask(rec));
    }
  };

  let stopCreating = false;
  const manager = (async () => {
    for (let i = 0; i < params.ttlProbes; i++)
      track(driveTask(newRec(i % 2 === 0 ? 'chaos_ttl_input' : 'chaos_ttl_sleep')));
    stats.ttlProbes += params.ttlProbes;
    let lastAdopt = now();
    while (!stopCreating && !scope.closed) {
      const jobs = [...drivers].length;
      for (let n = jobs; n < params.inflight + params.ttlProbes && !stopCreating; n++)
        track(driveTask(newRec()));
      if (now() - lastAdopt > 2_000) {
        lastAdopt = now();
        await adoptOrphans();
      }
      await sleep(25);
    }
  })();

  // ----- the clock jumper (clock section): offsets of one process at a time, cycling through params.offsets
  const chaosStarted = now();
  const jumps = [];
  if (jumping) {
    stats.jumps = 0;
    stats.maxOffsetMs = Math.max(...params.offsets.map((o) => Math.abs(o)));
    let midTtlDone = false;
    while (stats.jumps < params.jumps && now() - chaosStarted < params.chaosMs && !scope.closed) {
      await sleep(rng.int(params.gapMinMs, params.gapMaxMs));
      const slot = slots[stats.jumps % slots.length];
      const offset = params.offsets[stats.jumps % params.offsets.length];
      if (slot.proc === undefined || slot.proc.dead) continue;
      writeFileSync(slot.clockFile, String(offset));
      slot.proc.child.kill('SIGUSR2');
      jumps.push({ slot: slot.i, from: slot.offset, to: offset, t: now() });
      slot.offset = offset;
      stats.jumps += 1;
      // Right after a jump (not before one), so that the creating process's clock is the one the probe will see.
      if (!midTtlDone && stats.jumps >= params.jumps / 2) {
        midTtlDone = true;
        for (let i = 0; i < params.ttlProbes; i++)
          track(driveTask(newRec(i % 2 === 0 ? 'chaos_ttl_input' : 'chaos_ttl_sleep')));
        stats.ttlProbes += params.ttlProbes;
      }
      progress?.(`${stats.jumps}/${params.jumps} jumps, ${stats.tasks} tasks`);
    }
    // Every clock back to the truth, as after an NTP correction: the settle phase then needs no slack.
    for (const slot of slots) {
      if (slot.offset === 0 || slot.proc === undefined || slot.proc.dead) continue;
      writeFileSync(slot.clockFile, '0');
      slot.proc.child.kill('SIGUSR2');
      jumps.push({ slot: slot.i, from: slot.offset, to: 0, t: now() });
      slot.offset = 0;
    }
    stats.jumpList = jumps.map((j) => `${j.slot}:${j.from / 1000}s→${j.to / 1000}s`);
    inv.expect(
      'jumps',
      stats.jumps >= params.jumps,
      `only ${stats.jumps} of ${params.jumps} jumps within ${params.chaosMs} ms`,
    );
  }

  // ----- the killer
  const pointTable = Object.entries(params.points ?? {});
  let midTtlDone = false;
  while (!jumping && stats.kills < params.kills && now() - chaosStarted < params.chaosMs && !scope.closed) {
    await sleep(rng.int(params.gapMinMs, params.gapMaxMs));
    if (!midTtlDone && stats.kills >= params.kills / 2) {
      midTtlDone = true;
      for (let i = 0; i < params.ttlProbes; i++)
        track(driveTask(newRec(i % 2 === 0 ? 'chaos_ttl_input' : 'chaos_ttl_sleep')));
      stats.ttlProbes += params.ttlProbes;
    }
    const point = rng.weighted(pointTable);
    let done = false;
    if (point === 'mid-step') {
      let candidates = [...activeSteps.values()].filter((l) => livePid(l.pid));
      if (candidates.length === 0) {
        const line = await waitLine((l) => l.event === 'step-start' && livePid(l.pid), 1_500);
        if (line !== undefined) candidates = [line];
      }
      if (candidates.length > 0) {
        const c = rng.pick(candidates);
        await sleep(rng.int(0, Math.max(1, params.stepMsMin)));
        if (activeSteps.has(`${c.task}/${c.run}/${c.detail}`)) {
          done = await kill(slotOfPid(c.pid), 'mid-step', { task: c.task, run: c.run, step: c.detail });
        }
      }
    } else if (point === 'mid-commit') {
      const line = await waitLine((l) => l.event === 'step-end' && livePid(l.pid), 1_500);
      if (line !== undefined) {
        done = await kill(slotOfPid(line.pid), 'mid-commit', {
          task: line.task,
          run: line.run,
          step: line.detail,
        });
      }
    } else if (point === 'mid-retry') {
      // Right after an attempt failed: before or after the runtime stored the failure and the wait.
      const line = await waitLine((l) => l.event === 'step-fail' && livePid(l.pid), 1_500);
      if (line !== undefined) {
        done = await kill(slotOfPid(line.pid), 'mid-retry', {
          task: line.task,
          run: line.run,
          step: line.detail,
        });
      }
    } else if (point === 'mid-finish') {
      const ends = { return: 'mid-finish', input: 'mid-suspend', wait: 'mid-wait' };
      const line = await waitLine((l) => l.event === 'run-end' && l.detail in ends && livePid(l.pid), 1_500);
      if (line !== undefined) {
        done = await kill(slotOfPid(line.pid), ends[line.detail], { task: line.task, run: line.run });
      }
    } else if (point === 'mid-answer' || point === 'mid-create') {
      const slot = await armHook(point === 'mid-answer' ? 'update' : 'create', 1_500);
      if (slot !== undefined) {
        await sleep(rng.int(0, 3));
        done = await kill(slot, point);
      }
    } else if (point === 'mid-startup') {
      const starting = slots.filter(
        (s) => s.proc !== undefined && !s.proc.ready && !s.proc.dead && !s.proc.doomed,
      );
      if (starting.length > 0) {
        await sleep(rng.int(0, 400));
        const s = rng.pick(starting);
        if (!s.proc.ready) done = await kill(s, 'mid-startup');
      }
    }
    if (!done) {
      const l = live();
      if (l.length > 0) await kill(rng.pick(l), 'random');
    }
    progress?.(`${stats.kills}/${params.kills} kills, ${stats.tasks} tasks`);
  }
  const chaosMs = now() - chaosStarted;
  if (!jumping)
    inv.expect(
      'kills',
      stats.kills >= params.kills,
      `only ${stats.kills} of ${params.kills} kills within ${params.chaosMs} ms`,
    );

  // ----- settle: no more kills or new tasks; every process back; every task must end
  chaosOn = false;
  stopCreating = true;
  await manager;
  for (const slot of slots) {
    if (slot.proc === undefined || slot.proc.dead || slot.proc.doomed) {
      if (slot.restartTimer !== undefined) clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
      if (slot.proc === undefined || slot.proc.dead) startSlot(slot);
    }
  }
  await Promise.all(slots.map((s) => s.proc.started.catch(() => undefined)));
  const settleStart = now();
  await adoptOrphans();
  // Each step may also wait out its backoffs (one run per attempt) and a sleep.
  const waitsMs =
    params.retryRate > 0 || params.sleepRate > 0
      ? params.stepsMax *
        ((params.failMax + 1) * (params.backoffMaxMs + params.stepMsMax) + params.sleepMsMax)
      : 0;
  const settleBound = params.leaseMs + params.stepsMax * params.stepMsMax + waitsMs + 8_000 + 4_000; // + TTL probes
  let settled = false;
  while (now() - settleStart < settleBound && !scope.closed) {
    if (drivers.size === 0) {
      settled = true;
      break;
    }
    await sleep(50);
  }
  const settleMs = now() - settleStart;
  // tasks/get says "task expired" as soon as the TTL has passed; the row is marked failed by the next sweep.
  const lastExpiredSeen = Math.max(0, ...recs.map((r) => r.expiredSeenAt ?? 0));
  if (settled && lastExpiredSeen > 0)
    await sleep(Math.min(SWEEP_MS + 1_000, lastExpiredSeen + SWEEP_MS + 1_000 - now()));
  if (!settled) {
    const open = recs.filter(
      (r) => r.final === undefined && r.expiredSeenAt === undefined && r.taskId !== undefined,
    );
    inv.fail(
      'stuck',
      `${open.length} tasks not terminal ${settleBound} ms after the last kill: ${open
        .slice(0, 5)
        .map((r) => `${r.taskId} (${r.history.join('→')})`)
        .join(', ')}`,
    );
  } else inv.ok('stuck');
  hardStop = true;
  for (const slot of slots) {
    clearTimeout(slot.restartTimer);
    if (slot.proc !== undefined && !slot.proc.dead) {
      slot.proc.doomed = true;
      slot.proc.child.kill('SIGKILL');
      await slot.proc.exited;
      // Logged like the driver's kills: a run still open in it was interrupted, not lost.
      appendLog(logFile, 'killed', slot.proc.pid);
    }
  }
  clearInterval(pumpTimer);
  pump();
  tail.close();
  for (const u of unplanned) inv.fail('no-crash', u);
  inv.ok('no-crash', stats.restarts + params.servers - unplanned.length);

  // ----- read the store and the log, check
  const store = await readStore(backend, backend === 'sqlite' ? join(dir, 'tasks.db') : pgUrl, schema);
  const lines = new LogTail(logFile);
  const all = lines.read();
  lines.close();
  const analysis = analyse({ store, lines: all, byTask, recs, sentCids, unknownCids, kills, inv, params });
  Object.assign(stats, analysis, { chaosMs, settleMs, durationMs: now() - started });
  const what = jumping
    ? `${fmtInt(stats.jumps)} clock jumps of up to ${stats.maxOffsetMs / 60_000} min, ${fmtInt(stats.fencedRuns)} runs fenced`
    : `${fmtInt(stats.kills)} kills (${Object.entries(stats.killsByPoint)
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`;
  stats.summaryLine = `${what}; ${fmtInt(stats.storedTasks - stats.ttlProbes)} tasks (${fmtInt(stats.completed)} completed, ${fmtInt(stats.cancelled)} cancelled, ${fmtInt(stats.failed)} failed) + ${stats.ttlProbes} TTL probes, ${fmtInt(stats.runs)} runs`;
  if (!jumping) stats.summaryLine += `; ${durableSummary(stats)}`;
  return { inv, stats };
}

/** Retries, sleeps and keyed creations in one line. */
function durableSummary(stats) {
  const d = stats.durable;
  const k = stats.keys;
  const dropped = Object.values(k.dropped).reduce((a, b) => a + b, 0);
  return `${fmtInt(d.retryTasks)} tasks with failing steps (${fmtInt(d.failedAttempts)} failed attempts, ${fmtInt(d.retries)} retries, ${fmtInt(d.gaveUp)} gave up), ${fmtInt(d.sleepTasks)} with sleeps (${fmtInt(d.sleeps)} ended); ${fmtInt(k.keyed)} keyed calls, ${fmtInt(dropped)} answers dropped + ${fmtInt(k.lostToKills)} lost to kills, retried: ${fmtInt(stats.duplicates)} duplicate tasks`;
}

async function readStore(backend, location, schema) {
  if (backend === 'sqlite') {
    const db = new Database(location, { fileMustExist: true });
    try {
      return {
        tasks: db
          .prepare(
            'SELECT id, tool, args, status, result, error, attempt, created_at, updated_at, expires_at, idempotency_key FROM tasks',
          )
          .all(),
        steps: db.prepare('SELECT task_id, name, value FROM task_steps').all(),
        inputs: db.prepare('SELECT task_id, key, answer, superseded FROM task_inputs').all(),
        attempts: db.prepare('SELECT task_id, name, failed, last_failure FROM task_step_attempts').all(),
      };
    } finally {
      db.close();
    }
  }
  const s = pg.escapeIdentifier(schema);
  const [tasks, steps, inputs, attempts] = await Promise.all([
    pgQuery(
      location,
      `SELECT id, tool, args, status, result, error, attempt, created_at::float8 AS created_at,
         updated_at::float8 AS updated_at, expires_at::float8 AS expires_at, idempotency_key FROM ${s}.tasks`,
    ),
    pgQuery(location, `SELECT task_id, name, value FROM ${s}.task_steps`),
    pgQuery(location, `SELECT task_id, key, answer, superseded FROM ${s}.task_inputs`),
    pgQuery(location, `SELECT task_id, name, failed, last_failure FROM ${s}.task_step_attempts`),
  ]);
  return { tasks, steps, inputs, attempts };
}

/** Checks the store and the per-attempt log against the crash invariants; returns figures for the report. */
export function analyse({ store, lines, byTask, recs, sentCids, unknownCids, kills, inv, params }) {
  // Retries, sleeps and idempotency keys are judged where their times share one clock: not under clock jumps.
  const durable = params.jumps === undefined;
  const out = {
    storedTasks: store.tasks.length,
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
  const linesByTask = new Map();
  const killedSeq = new Map();
  const killedAt = new Map();
  const replayDelays = [];
  for (const l of lines) {
    if (l.event === 'killed') {
      killedSeq.set(l.pid, l.seq);
      killedAt.set(l.pid, l.t);
      continue;
    }
    let list = linesByTask.get(l.task);
    if (list === undefined) linesByTask.set(l.task, (list = []));
    list.push(l);
  }
  const stepsByTask = new Map();
  for (const s of store.steps) {
    let m = stepsByTask.get(s.task_id);
    if (m === undefined) stepsByTask.set(s.task_id, (m = new Map()));
    m.set(s.name, JSON.parse(s.value));
  }
  const attemptsByTask = new Map();
  for (const a of store.attempts ?? []) {
    let m = attemptsByTask.get(a.task_id);
    if (m === undefined) attemptsByTask.set(a.task_id, (m = new Map()));
    let last;
    try {
      last = JSON.parse(a.last_failure);
    } catch {
      last = undefined;
    }
    m.set(a.name, { failed: Number(a.failed), last });
  }
  const seenCids = new Map();

  for (const row of store.tasks) {
    const args = JSON.parse(row.args);
    const rec = byTask.get(row.id);
    out.maxAttempt = Math.max(out.maxAttempt, Number(row.attempt));
    if (row.tool !== 'chaos_job') out.ttlProbes += 1;
    else if (row.status === 'completed') out.completed += 1;
    else if (row.status === 'cancelled') out.cancelled += 1;
    else if (row.status === 'failed') out.failed += 1;

    // handles and creation
    inv.expect('handles', sentCids.has(args.cid), `task ${row.id} carries client id ${args.cid} nobody sent`);
    if (seenCids.has(args.cid)) {
      inv.fail(
        'handles',
        `one tools/call (${args.cid}) created two tasks: ${seenCids.get(args.cid)} and ${row.id}`,
      );
    }
    seenCids.set(args.cid, row.id);
    if (rec === undefined) {
      inv.expect(
        'handles',
        unknownCids.has(args.cid),
        `task ${row.id} (${args.cid}) exists although its tools/call was answered with another handle`,
      );
    }

    // terminal
    inv.expect('terminal', TERMINAL.has(row.status), `task ${row.id} (${row.tool}) is still ${row.status}`);
    if (row.tool !== 'chaos_job') {
      // TTL probes: failed as expired, within TTL + one sweep (+ slack for restarts)
      const error = row.error === null ? undefined : JSON.parse(row.error);
      const late = Number(row.updated_at) - Number(row.expires_at);
      // With clock jumps, creation and expiry may be stamped by clocks that were off by up to the largest offset.
      const skew = Math.max(0, ...(params.offsets ?? []).map((o) => 2 * Math.abs(o)));
      inv.expect(
        'stuck',
        row.status === 'failed' && error?.message === 'task expired' && late <= SWEEP_MS + 3_000 + skew,
        () => `TTL probe ${row.id} (${row.tool}): ${row.status} ${row.error} ${late} ms after its expiry`,
      );
      continue;
    }
    if (params.jumps !== undefined) {
      const error = row.error === null ? undefined : JSON.parse(row.error);
      inv.expect(
        'no-spurious-expiry',
        error?.message !== 'task expired',
        () =>
          `task ${row.id} (TTL one hour) expired although no clock was off by more than ${Math.max(...params.offsets.map(Math.abs)) / 60_000} min`,
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

    // the per-attempt log of this task
    const tl = linesByTask.get(row.id) ?? [];
    const runs = [];
    const runInfo = new Map();
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
    for (let i = 1; i < runs.length; i++) {
      const prev = runInfo.get(runs[i - 1]);
      if (prev.end?.detail === 'input') out.resumedRuns += 1;
      else if (prev.end?.detail === 'wait') out.resumedAfterWait += 1;
      else out.crashReplays += 1;
      // Was the previous run still going (its process alive, no end) when this one started? It must have been fenced.
      const startSeq = runInfo.get(runs[i]).start.seq;
      const prevKilled = killedSeq.get(prev.pid);
      const prevOpen =
        (prev.end === undefined || prev.end.seq > startSeq) &&
        !(prevKilled !== undefined && prevKilled < startSeq);
      if (prevOpen) out.fencedRuns += 1;
      // How long a task interrupted by a kill waited for its replay (lease expiry, a free slot, a live worker).
      if (prev.end === undefined && prevKilled !== undefined && prevKilled < startSeq) {
        replayDelays.push(runInfo.get(runs[i]).start.t - killedAt.get(prev.pid));
      }
    }

    // memo: a committed step never runs again (a failed attempt is no commit; sleeps keep their wake time there)
    const stored = stepsByTask.get(row.id) ?? new Map();
    const committed = [...stored].filter(([name]) => /^s\d+$/.test(name));
    const starts = tl.filter((l) => l.event === 'step-start');
    const failedAttempts = tl.filter((l) => l.event === 'step-fail').length;
    out.stepExecutions += starts.length;
    out.stepsCommitted += committed.length;
    out.stepReruns += Math.max(0, starts.length - committed.length - failedAttempts);
    for (const [name, value] of committed) {
      const owner = runInfo.get(value.run);
      const endLine = owner?.ends.get(name);
      if (
        !inv.expect(
          'memo',
          endLine !== undefined,
          `task ${row.id}: step ${name} stored from run ${value.run}, which never finished it`,
        )
      )
        continue;
      const savedLine = owner.saved.get(name);
      for (const s of starts) {
        if (s.detail !== name || s.run === value.run) continue;
        if (savedLine !== undefined && s.seq > savedLine.seq) {
          inv.fail(
            'memo',
            `task ${row.id}: step ${name} ran again in run ${s.run} (pid ${s.pid}) after run ${value.run} had committed it`,
          );
        } else if (runInfo.get(s.run)?.start.seq > endLine.seq) {
          inv.fail(
            'memo',
            `task ${row.id}: step ${name} ran again in run ${s.run} (pid ${s.pid}), which started after run ${value.run} had finished and committed it`,
          );
        } else inv.ok('memo');
      }
      inv.ok('memo');
    }

    // single holder: no run committed a step after a newer run had claimed the task. With clock jumps a takeover
    // can follow a claim within milliseconds, so two runs may start in the opposite order of their claims; the one
    // that started later but holds the older claim is fenced from its first write. There, only runs that committed
    // something are known to be in claim order, and only those are compared.
    let resultRun;
    try {
      resultRun =
        row.status === 'completed' ? JSON.parse(JSON.parse(row.result).content[0].text).run : undefined;
    } catch {
      resultRun = undefined;
    }
    const order =
      params.jumps === undefined
        ? runs
        : runs.filter((r) => runInfo.get(r).saved.size > 0 || r === resultRun);
    for (let i = 0; i + 1 < order.length; i++) {
      const a = runInfo.get(order[i]);
      const nextStart = runInfo.get(order[i + 1]).start.seq;
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

    // attempts and waits; a task whose step ran out of attempts was ended by the last run, giving up
    const result = !durable
      ? undefined
      : checkDurable({
          row,
          args,
          tl,
          runInfo,
          stored,
          attempts: attemptsByTask.get(row.id) ?? new Map(),
          killedSeq,
          rec,
          inv,
          out: out.durable,
        });
    if (result?.isError) {
      const last = runInfo.get(order[order.length - 1]);
      inv.expect(
        'single-holder',
        last?.end?.detail === 'gave-up',
        () =>
          `task ${row.id}: ended with an error, but its last run ${order[order.length - 1]} ended ${last?.end?.detail}`,
      );
      continue;
    }

    if (row.status === 'completed') {
      let summary;
      try {
        summary = JSON.parse(JSON.parse(row.result).content[0].text);
      } catch {
        inv.fail('single-holder', `task ${row.id}: unreadable result ${String(row.result).slice(0, 200)}`);
        continue;
      }
      inv.expect(
        'single-holder',
        summary.run === order[order.length - 1],
        () =>
          `task ${row.id}: the stored result comes from run ${summary.run}, but run ${order[order.length - 1]} started after it`,
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
        summary.steps.every((s, i) => i === 0 || s.prev === summary.steps[i - 1].run),
        () => `task ${row.id}: broken step chain ${JSON.stringify(summary.steps)}`,
      );
      // answers
      if (rec !== undefined) {
        const expectedKeys = Array.from({ length: args.inputs }, (_, i) => `k${i}`);
        for (const key of expectedKeys) {
          out.answersChecked += 1;
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
    }
  }

  if (durable) {
    const jobs = store.tasks.filter((t) => t.tool === 'chaos_job');
    out.duplicates = checkKeys({ tasks: jobs, recs: recs ?? [...byTask.values()], inv });
    out.wakeLate = wakeLateness(out.durable);
    delete out.durable.wakeLate;
  }

  // Where did the mid-commit kills land: before or after the step's commit?
  for (const k of kills) {
    if (k.point !== 'mid-commit') continue;
    const stored = stepsByTask.get(k.task)?.get(k.step);
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
  out.replayDelay = {
    n: replayDelays.length,
    p50: percentile(replayDelays, 50),
    p99: percentile(replayDelays, 99),
    max: replayDelays.length === 0 ? undefined : Math.max(...replayDelays),
  };
  return out;
}
