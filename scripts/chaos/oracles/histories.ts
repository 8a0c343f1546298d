// Consistent synthetic histories for the oracles section: what the crash checker must accept as it is, and where
// violations are planted.
import type { LogLine } from '../harness/log-tail.js';
import type { ClientRec, StoreSnapshot } from '../crash/types.js';

export interface History {
  lines: LogLine[];
  store: StoreSnapshot;
  rec: ClientRec;
}

export const T = 'task_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
export const D = 'task_DDDDDDDDDDDDDDDDDDDDDDDDDDDDDDDD';

/** A completed chaos_job row with its result summary. */
const jobRow = (
  id: string,
  args: object,
  summary: object,
  fields: object,
): StoreSnapshot['tasks'][number] => ({
  id,
  tool: 'chaos_job',
  args: JSON.stringify(args),
  status: 'completed',
  result: JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(summary) }] }),
  error: null,
  attempt: 0,
  created_at: 0,
  updated_at: 0,
  expires_at: 0,
  ...fields,
});

/** A consistent history: two runs, an input in between, two memoized steps, one answer. */
export function cleanHistory(): History {
  const raw: [string, string, string, string, number, number?][] = [
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
        jobRow(T, { cid: 'c1', steps: 2, inputs: 1, ms: 1 }, summary, {
          attempt: 2,
          created_at: 0,
          updated_at: 1,
          expires_at: 3_600_000,
        }),
      ],
      steps: steps.map((v, i) => ({ task_id: T, name: `s${i}`, value: JSON.stringify(v) })),
      inputs: [],
    },
    rec: {
      cid: 'c1',
      taskId: T,
      tool: 'chaos_job',
      args: { steps: 2, inputs: 1 },
      final: { status: 'completed' },
      history: ['working', 'input_required', 'working', 'completed'],
      answers: { k0: 'c1:k0:v' },
      acked: new Set(['k0']),
    },
  };
}

const RETRY = { maxAttempts: 3, initialDelayMs: 50, backoffFactor: 2, maxDelayMs: 200, jitter: 0.2 };

/** The log of the durable history: [event, run, detail, pid, t, n]. */
const DURABLE_LOG: [string, string, string, number, number, number?][] = [
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

/**
 * A consistent history of a task created under an idempotency key that sleeps 300 ms after s0 and whose s1 fails
 * its first attempt: r1 runs s0 and begins the sleep; r2 (after the wake time) fails s1's attempt 1 and waits out
 * the backoff; r3 begins attempt 2 and is killed; r4 runs attempt 2 again and ends the task.
 */
export function durableHistory(): History {
  const steps = [
    { run: 'r1', i: 0, prev: null, attempt: 1 },
    { run: 'r4', i: 1, prev: 'r1', attempt: 2 },
  ];
  const summary = { taskId: D, run: 'r4', steps, answers: {}, slept: ['z0'] };
  const args = { cid: 'c2', steps: 2, inputs: 0, ms: 1, fails: [0, 1], retry: RETRY, sleeps: [300, 0] };
  const iso = (t: number): string => new Date(t).toISOString();
  const lastFailure = { attempt: 1, name: 'Error', message: 'planned', at: 1312, final: false };
  return {
    lines: DURABLE_LOG.map(([event, run, detail, pid, t, n], seq) => ({
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
        jobRow(D, args, summary, {
          attempt: 4,
          created_at: 999,
          updated_at: 2305,
          expires_at: 3_600_999,
          idempotency_key: 'c2-key',
        }),
      ],
      steps: [
        { task_id: D, name: 's0', value: JSON.stringify(steps[0]) },
        { task_id: D, name: 'z0', value: JSON.stringify({ wakeAt: 1302 }) },
        { task_id: D, name: 's1', value: JSON.stringify(steps[1]) },
      ],
      inputs: [],
      attempts: [{ task_id: D, name: 's1', failed: 1, last_failure: JSON.stringify(lastFailure) }],
    },
    rec: {
      cid: 'c2',
      key: 'c2-key',
      seenIds: new Set([D]),
      taskId: D,
      tool: 'chaos_job',
      args: { steps: 2, inputs: 0 },
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
