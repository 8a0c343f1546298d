// Section 0: the oracles check themselves. A clean synthetic history must pass the crash checker, and each planted
// violation (a memoized step run again, a stale run's commit, a lost answer, a duplicate creation, …) must be
// caught by the invariant meant to catch it; likewise the fuzz oracle must reject invalid, 5xx and mis-addressed
// replies. A chaos run that cannot fail proves nothing.
import { analyse, CRASH_INVARIANTS } from './crash.mjs';
import { loadTestSupport } from './fuzz.mjs';
import { Invariants, now } from './lib.mjs';

export const ORACLE_INVARIANTS = {
  'clean-passes': 'a consistent synthetic history (and valid replies) pass every check',
  'planted-caught': 'every planted violation is reported by the invariant meant to catch it',
};

const T = 'task_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** A consistent history: two runs, an input in between, two memoized steps, one answer. */
function cleanHistory() {
  const raw = [
    ['run-start', T, 'r1', '-', 10],
    ['step-start', T, 'r1', 's0', 10],
    ['step-end', T, 'r1', 's0', 10],
    ['step-saved', T, 'r1', 's0', 10],
    ['run-end', T, 'r1', 'input', 10],
    ['run-start', T, 'r2', '-', 11],
    ['step-start', T, 'r2', 's1', 11],
    ['step-end', T, 'r2', 's1', 11],
    ['step-saved', T, 'r2', 's1', 11],
    ['run-end', T, 'r2', 'return', 11],
  ];
  const steps = [
    { run: 'r1', i: 0, prev: null },
    { run: 'r2', i: 1, prev: 'r1' },
  ];
  const summary = { taskId: T, run: 'r2', steps, answers: { k0: 'c1:k0:v' } };
  return {
    lines: raw.map(([event, task, run, detail, pid], seq) => ({
      seq,
      event,
      task,
      run,
      detail,
      pid,
      t: seq,
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

function judge(h) {
  const inv = new Invariants();
  analyse({
    store: h.store,
    lines: h.lines,
    byTask: new Map([[T, h.rec]]),
    recs: [h.rec],
    sentCids: new Set(['c1']),
    unknownCids: new Set(),
    kills: [],
    inv,
    params: {},
  });
  return inv;
}

const insertLine = (h, at, fields) => {
  const [event, task, run, detail, pid] = fields;
  h.lines.splice(at, 0, { seq: 0, event, task, run, detail, pid, t: 0 });
  h.lines.forEach((l, seq) => (l.seq = seq));
};

const PLANTED = [
  [
    'memo',
    'a committed step runs again in a later run',
    (h) => insertLine(h, 7, ['step-start', T, 'r2', 's0', 11]),
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
      h.store.steps[1].value = JSON.stringify({ run: 'r1', i: 1, prev: 'r1' });
      insertLine(h, 4, ['step-end', T, 'r1', 's1', 10]);
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

export async function runOracles({ scope }) {
  const inv = new Invariants();
  for (const [name, description] of Object.entries(ORACLE_INVARIANTS)) inv.define(name, description);
  const started = now();

  const clean = judge(cleanHistory());
  for (const i of clean.toJSON()) {
    inv.expect(
      'clean-passes',
      i.failures.length === 0,
      () => `crash checker: ${i.name} flags a clean history: ${i.failures[0]}`,
    );
  }
  for (const [name, what, plant] of PLANTED) {
    const h = cleanHistory();
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
  const total = PLANTED.length + bad.length;
  return {
    inv,
    stats: {
      planted: total,
      durationMs: now() - started,
      summaryLine: `${total} planted violations, a clean history and a valid reply`,
    },
  };
}
