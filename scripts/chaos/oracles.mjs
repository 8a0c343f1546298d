// Section 0: the oracles check themselves. Clean synthetic histories must pass the crash checker, and each planted
// violation (a memoized step run again, a stale run's commit, a lost answer, a duplicate creation, a retried attempt
// numbered wrong, a sleep ending early, a second task under one idempotency key, …) must be caught by the invariant
// meant to catch it; likewise the fuzz oracle must reject invalid, 5xx and mis-addressed replies. A chaos run that
// cannot fail proves nothing.
import { analyse, CRASH_INVARIANTS } from './crash.mjs';
import { loadTestSupport } from './fuzz.mjs';
import { Invariants, now } from './lib.mjs';

export const ORACLE_INVARIANTS = {
  'clean-passes': 'consistent synthetic histories (and valid replies) pass every check',
  'planted-caught': 'every planted violation is reported by the invariant meant to catch it',
};

const T = 'task_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** A consistent history: two runs, an input in between, two memoized steps, one answer. */
function cleanHistory() {
  const raw = [
    ['run-start', T, 'r1', '-', 10],
    ['step-start', T, 'r1', 's0', 10, 1],
    ['step-end', T, 'r1', 's0', 10, 1],
    ['step-saved', T, 'r1', 's0', 10, 1],
    ['run-end', T, 'r1', 'input', 10],
    ['run-start', T, 'r2', '-', 11],
    ['step-start', T, 'r2', 's1', 11, 1],
    ['step-end', T, 'r2', 's1', 11, 1],
    ['step-saved', T, 'r2', 's1', 11, 1],
    ['run-end', T, 'r2', 'return', 11],
  ];
  const steps = [
    { run: 'r1', i: 0, prev: null, attempt: 1 },
    { run: 'r2', i: 1, prev: 'r1', attempt: 1 },
  ];
  const summary = { taskId: T, run: 'r2', steps, answers: { k0: 'c1:k0:v' }, slept: [] };
  return {
    lines: raw.map(([event, task, run, detail, pid, n], seq) => ({
      seq,
      event,
      task,
      run,
      detail,
      pid,
      t: seq,
      n,
    })),
    store: {
      tasks: [
        {
          id: T,
          tool: 'chaos_job',
          args: JSON.stringify({ cid: 'c1', steps: 2, inputs: 1, ms: 1 }),
          status: 'completed',
          result: JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(summary) }] }),
          error: null,
          attempt: 2,
          created_at: 0,
          updated_at: 1,
          expires_at: 3_600_000,
        },
      ],
      steps: steps.map((v, i) => ({ task_id: T, name: `s${i}`, value: JSON.stringify(v) })),
      inputs: [],
    },
    rec: {
      cid: 'c1',
      taskId: T,
      tool: 'chaos_job',
      final: { status: 'completed' },
      history: ['working', 'input_required', 'working', 'completed'],
      answers: { k0: 'c1:k0:v' },
      acked: new Set(['k0']),
    },
  };
}

const D = 'task_DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD';
const RETRY = { maxAttempts: 3, initialDelayMs: 50, backoffFactor: 2, maxDelayMs: 200, jitter: 0.2 };

/**
 * A consistent history of a task created under an idempotency key that sleeps 300 ms after s0 and whose s1 fails
 * its first attempt: r1 runs s0 and begins the sleep; r2 (after the wake time) fails s1's attempt 1 and waits out
 * the backoff; r3 begins attempt 2 and is killed; r4 runs attempt 2 again and ends the task.
 */
function durableHistory() {
  const raw = [
    ['run-start', 'r1', '-', 10, 1000],
    ['step-start', 'r1', 's0', 10, 1000, 1],
    ['step-end', 'r1', 's0', 10, 1001, 1],
    ['step-saved', 'r1', 's0', 10, 1002, 1],
    ['sleep-start', 'r1', 'z0', 10, 1002, 300],
    ['run-end', 'r1', 'wait', 10, 1003],
    ['run-start', 'r2', '-', 11, 1310],
    ['sleep-start', 'r2', 'z0', 11, 1310, 300],
    ['sleep-end', 'r2', 'z0', 11, 1310],
    ['step-start', 'r2', 's1', 11, 1311, 1],
    ['step-fail', 'r2', 's1', 11, 1312, 1],
    ['run-end', 'r2', 'wait', 11, 1313],
    ['run-start', 'r3', '-', 12, 1400],
    ['sleep-start', 'r3', 'z0', 12, 1400, 300],
    ['sleep-end', 'r3', 'z0', 12, 1400],
    ['step-start', 'r3', 's1', 12, 1401, 2],
    ['killed', '-', '-', 12, 1420],
    ['run-start', 'r4', '-', 13, 2300],
    ['sleep-start', 'r4', 'z0', 13, 2300, 300],
    ['sleep-end', 'r4', 'z0', 13, 2300],
    ['step-start', 'r4', 's1', 13, 2301, 2],
    ['step-end', 'r4', 's1', 13, 2302, 2],
    ['step-saved', 'r4', 's1', 13, 2303, 2],
    ['run-end', 'r4', 'return', 13, 2304],
  ];
  const steps = [
    { run: 'r1', i: 0, prev: null, attempt: 1 },
    { run: 'r4', i: 1, prev: 'r1', attempt: 2 },
  ];
  const summary = { taskId: D, run: 'r4', steps, answers: {}, slept: ['z0'] };
  const args = { cid: 'c2', steps: 2, inputs: 0, ms: 1, fails: [0, 1], retry: RETRY, sleeps: [300, 0] };
  const iso = (t) => new Date(t).toISOString();
  return {
    lines: raw.map(([event, run, detail, pid, t, n], seq) => ({
      seq,
      event,
      task: event === 'killed' ? '-' : D,
      run,
      detail,
      pid,
      t,
      n,
    })),
    store: {
      tasks: [
        {
          id: D,
          tool: 'chaos_job',
          args: JSON.stringify(args),
          status: 'completed',
          result: JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(summary) }] }),
          error: null,
          attempt: 4,
          created_at: 999,
          updated_at: 2305,
          expires_at: 3_600_999,
          idempotency_key: 'c2-key',
        },
      ],
      steps: [
        { task_id: D, name: 's0', value: JSON.stringify(steps[0]) },
        { task_id: D, name: 'z0', value: JSON.stringify({ wakeAt: 1302 }) },
        { task_id: D, name: 's1', value: JSON.stringify(steps[1]) },
      ],
      inputs: [],
      attempts: [
        {
          task_id: D,
          name: 's1',
          failed: 1,
          last_failure: JSON.stringify({
            attempt: 1,
            name: 'Error',
            message: 'planned',
            at: 1312,
            final: false,
          }),
        },
      ],
    },
    rec: {
      cid: 'c2',
      key: 'c2-key',
      seenIds: new Set([D]),
      taskId: D,
      tool: 'chaos_job',
      final: { status: 'completed' },
      history: ['working', 'completed'],
      answers: {},
      acked: new Set(),
      waitsSeen: new Set([
        `Sleeping until ${iso(1302)}.`,
        `Retrying step "s1" (attempt 2 of 3) at ${iso(1372)}.`,
      ]),
    },
  };
}

function judge(h) {
  const inv = new Invariants();
  analyse({
    store: h.store,
    lines: h.lines,
    byTask: new Map([[h.rec.taskId, h.rec]]),
    recs: [h.rec],
    sentCids: new Set([h.rec.cid]),
    unknownCids: new Set(),
    kills: [],
    inv,
    params: {},
  });
  return inv;
}

const insertLine = (h, at, fields) => {
  const [event, task, run, detail, pid, n] = fields;
  h.lines.splice(at, 0, { seq: 0, event, task, run, detail, pid, t: 0, n });
  h.lines.forEach((l, seq) => (l.seq = seq));
};

const lineOf = (h, event, run, detail) =>
  h.lines.find((l) => l.event === event && l.run === run && l.detail === detail);
const setWake = (h, wakeAt) => (h.store.steps[1].value = JSON.stringify({ wakeAt }));

const PLANTED = [
  [
    'memo',
    'a committed step runs again in a later run',
    (h) => insertLine(h, 7, ['step-start', T, 'r2', 's0', 11, 2]),
  ],
  [
    'single-holder',
    'a run starts after the run whose result was stored',
    (h) => insertLine(h, 10, ['run-start', T, 'r3', '-', 12]),
  ],
  [
    'single-holder',
    "a stale run's step value replaces the one the result saw",
    (h) => {
      h.store.steps[1].value = JSON.stringify({ run: 'r1', i: 1, prev: 'r1', attempt: 1 });
      insertLine(h, 4, ['step-end', T, 'r1', 's1', 10, 1]);
    },
  ],
  [
    'single-holder',
    'a run commits a step after a newer run claimed the task',
    (h) => {
      // r2 starts while r1's step body is still running; r1 then commits s0 anyway.
      const r2start = h.lines.splice(5, 1)[0];
      h.lines.splice(2, 0, r2start);
      h.lines.forEach((l, seq) => (l.seq = seq));
    },
  ],
  [
    'answers',
    'an acknowledged answer is not the one the task used',
    (h) => (h.rec.answers.k0 = 'c1:k0:other'),
  ],
  ['terminal', 'a task never ends', (h) => (h.store.tasks[0].status = 'working')],
  [
    'terminal',
    'the client saw another terminal state than the store holds',
    (h) => (h.rec.final = { status: 'failed' }),
  ],
  [
    'handles',
    'one tools/call created two tasks',
    (h) => h.store.tasks.push({ ...h.store.tasks[0], id: `${T.slice(0, -1)}B`, status: 'completed' }),
  ],
];

/** Violations planted in the durable history: [invariant, what, plant]. */
const PLANTED_DURABLE = [
  ['attempts', 'a retry skips an attempt number', (h) => (lineOf(h, 'step-start', 'r3', 's1').n = 3)],
  [
    'attempts',
    'an attempt whose failure was stored runs again under its number',
    (h) => (lineOf(h, 'step-start', 'r3', 's1').n = 1),
  ],
  [
    'attempts',
    'the store counts another number of failed attempts than were planned',
    (h) => (h.store.attempts[0].failed = 2),
  ],
  ['waits', 'a sleep ends before its wake time', (h) => setWake(h, 1400)],
  ['waits', 'a replay pushes back the wake time the first waiting run fixed', (h) => setWake(h, 1305)],
  ['waits', 'a retry starts before its backoff', (h) => (lineOf(h, 'step-start', 'r3', 's1').t = 1320)],
  [
    'idempotent',
    'a retried call under one key made a second task',
    (h) => h.store.tasks.push({ ...h.store.tasks[0], id: `${D.slice(0, -1)}E`, idempotency_key: null }),
  ],
  [
    'idempotent',
    'a client was answered with two tasks for one key',
    (h) => h.rec.seenIds.add(`${D.slice(0, -1)}E`),
  ],
];

export async function runOracles({ scope }) {
  const inv = new Invariants();
  for (const [name, description] of Object.entries(ORACLE_INVARIANTS)) inv.define(name, description);
  const started = now();

  for (const history of [cleanHistory, durableHistory]) {
    for (const i of judge(history()).toJSON()) {
      inv.expect(
        'clean-passes',
        i.failures.length === 0,
        () => `crash checker: ${i.name} flags a clean history: ${i.failures[0]}`,
      );
    }
  }
  const plants = [
    ...PLANTED.map((p) => [cleanHistory, ...p]),
    ...PLANTED_DURABLE.map((p) => [durableHistory, ...p]),
  ];
  for (const [history, name, what, plant] of plants) {
    const h = history();
    plant(h);
    const got = judge(h).list.get(name);
    inv.expect(
      'planted-caught',
      got !== undefined && got.failures.length > 0,
      `crash checker: "${what}" not reported by ${name}`,
    );
    if (!(name in CRASH_INVARIANTS)) inv.fail('planted-caught', `unknown invariant ${name}`);
  }

  const [{ check }] = await loadTestSupport(scope.tempDir('durable-mcp-chaos-oracles-'), ['fuzz-model']);
  const request = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const reply = (status, msg) => ({
    status,
    headers: new globalThis.Headers({ 'content-type': 'application/json' }),
    text: JSON.stringify(msg),
    messages: [msg],
    truncated: false,
    contentType: 'application/json',
  });
  const sent = { parsed: request, label: JSON.stringify(request) };
  const good = check(
    sent,
    reply(200, { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params' } }),
  );
  inv.expect('clean-passes', good === undefined, () => `fuzz oracle rejects a valid reply: ${good.why}`);
  const bad = [
    [
      'a reply that breaks the schema',
      reply(200, { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', tools: 'x' } }),
    ],
    ['a 5xx', reply(500, { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error' } })],
    [
      'a reply to another id',
      reply(200, { jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params' } }),
    ],
    [
      'an error with the wrong HTTP status',
      reply(200, { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }),
    ],
  ];
  for (const [what, res] of bad) {
    const outcome = check(sent, res);
    inv.expect('planted-caught', outcome !== undefined, `fuzz oracle accepts ${what}`);
  }
  const total = plants.length + bad.length;
  return {
    inv,
    stats: {
      planted: total,
      durationMs: now() - started,
      summaryLine: `${total} planted violations, two clean histories and a valid reply`,
    },
  };
}
