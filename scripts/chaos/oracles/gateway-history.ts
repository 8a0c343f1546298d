// A consistent synthetic history of a gateway section, and violations planted in it: what the gateway checker must
// accept as it is, and what each of its invariants must report.
import type { TaskRow } from '../crash/types.js';
import type { RpcAnswer } from '../harness/rpc.js';
import {
  expectedResult,
  IDEMPOTENCY_KEY,
  type GatewayHistory,
  type GatewayRec,
  type UpstreamCall,
} from '../gateway/check.js';

export type GatewayPlant = [invariant: string, what: string, plant: (h: GatewayHistory) => void];

const id = (n: number): string => `task_${String(n).repeat(32)}`;

const UNKNOWN = {
  code: -32603,
  message: 'outcome unknown: the upstream may have done this; check before retrying',
  data: { outcome: 'unknown', tool: 'send_payment', reason: 'the gateway stopped after sending the call' },
};
const NOT_SENT = {
  code: -32603,
  message: 'the call was not sent: cannot reach the upstream',
  data: { outcome: 'not_sent', tool: 'send_payment' },
};

type Plan = [n: number, tool: GatewayRec['tool'], args: Record<string, unknown>, end: object, calls: number];

/**
 * An idempotent call sent twice (a crash between) and completed; a payment sent once and completed; two payments
 * ended "outcome unknown", one after its call reached the upstream and one before; one payment not sent.
 */
const PLANS: Plan[] = [
  [1, 'slow_sum', { a: 1, b: 2, ms: 10 }, {}, 2],
  [2, 'send_payment', { to: 'p2', cents: 5, ms: 10 }, {}, 1],
  [3, 'send_payment', { to: 'p3', cents: 7, ms: 10 }, UNKNOWN, 1],
  [4, 'send_payment', { to: 'p4', cents: 9, ms: 10 }, UNKNOWN, 0],
  [5, 'send_payment', { to: 'p5', cents: 11, ms: 10 }, NOT_SENT, 0],
];

export function cleanGatewayHistory(): GatewayHistory {
  const h: GatewayHistory = { tasks: [], recs: [], calls: [] };
  for (const [n, tool, args, end, calls] of PLANS) {
    const failed = 'code' in end;
    const result = failed ? undefined : { resultType: 'complete', ...expectedResult(tool, args) };
    const row: TaskRow = {
      id: id(n),
      tool,
      args: JSON.stringify(args),
      status: failed ? 'failed' : 'completed',
      result: result === undefined ? null : JSON.stringify(result),
      error: failed ? JSON.stringify(end) : null,
      attempt: calls,
      created_at: 0,
      updated_at: 1,
      expires_at: 3_600_000,
      idempotency_key: `key-${n}`,
    };
    h.tasks.push(row);
    h.recs.push({
      key: `key-${n}`,
      tool,
      args,
      taskId: row.id,
      seenIds: new Set([row.id]),
      final: {
        taskId: row.id,
        status: row.status,
        ...(failed ? { error: end } : { result: result as RpcAnswer['result'] }),
      },
    });
    for (let i = 0; i < calls; i++)
      h.calls.push({ tool, args, meta: { [IDEMPOTENCY_KEY]: `durable-mcp:${row.id}` }, pid: 100 + i });
  }
  return h;
}

const task = (h: GatewayHistory, n: number): TaskRow => h.tasks[n - 1] as TaskRow;
const rec = (h: GatewayHistory, n: number): GatewayRec => h.recs[n - 1] as GatewayRec;
/** The first upstream call of task `n`. */
function callOf(h: GatewayHistory, n: number): UpstreamCall {
  const call = h.calls.find((c) => c.meta?.[IDEMPOTENCY_KEY] === `durable-mcp:${id(n)}`);
  if (call === undefined) throw new Error(`the clean history has no call of task ${n}`);
  return call;
}

/** Ends task `n` failed with `error`, in the store and in its client's last read. */
const failWith = (h: GatewayHistory, n: number, error: object): void => {
  task(h, n).status = 'failed';
  task(h, n).result = null;
  task(h, n).error = JSON.stringify(error);
  rec(h, n).final = { taskId: id(n), status: 'failed', error };
};

export const PLANTED_GATEWAY: GatewayPlant[] = [
  [
    'at-most-once',
    'a non-idempotent call a kill interrupted reaches the upstream twice',
    (h) => h.calls.push({ ...callOf(h, 3) }),
  ],
  [
    'at-most-once',
    'a completed payment reached the upstream twice',
    (h) => h.calls.push({ ...callOf(h, 2) }),
  ],
  [
    'at-most-once',
    'a completed payment never reached the upstream',
    (h) => h.calls.splice(h.calls.indexOf(callOf(h, 2)), 1),
  ],
  [
    'at-most-once',
    'a completed payment shows another result than the upstream gave',
    (h) =>
      (rec(h, 2).final = {
        status: 'completed',
        result: { content: [{ type: 'text', text: 'paid 6 to p2' }] },
      }),
  ],
  [
    'idempotent-exact',
    'an idempotent task completes with another result than the upstream gave',
    (h) =>
      (rec(h, 1).final = { status: 'completed', result: { ...expectedResult('slow_sum', { a: 1, b: 3 }) } }),
  ],
  [
    'idempotent-exact',
    'an idempotent task ends failed after its retries',
    (h) => failWith(h, 1, { code: -32603, message: 'lost', data: { outcome: 'failed', tool: 'slow_sum' } }),
  ],
  [
    'unknown-outcomes',
    'an outcome-unknown task reached the upstream twice',
    (h) => h.calls.push({ ...callOf(h, 3) }),
  ],
  [
    'unknown-outcomes',
    'an idempotent task ends "outcome unknown"',
    (h) => failWith(h, 1, { ...UNKNOWN, data: { ...UNKNOWN.data, tool: 'slow_sum' } }),
  ],
  [
    'no-unexplained-failure',
    'a task fails with an error that tells nothing of the outcome',
    (h) => failWith(h, 3, { code: -32603, message: 'boom' }),
  ],
  [
    'no-unexplained-failure',
    'a task "not sent" reached the upstream',
    (h) =>
      h.calls.push({
        ...callOf(h, 3),
        args: { to: 'p5', cents: 11, ms: 10 },
        meta: { [IDEMPOTENCY_KEY]: `durable-mcp:${id(5)}` },
      }),
  ],
  ['terminal', 'a task never ends', (h) => (task(h, 2).status = 'working')],
  [
    'terminal',
    "the client's last read shows another status than the store",
    (h) => (rec(h, 2).final = { status: 'failed', error: UNKNOWN }),
  ],
  ['handles', 'one client key made two tasks', (h) => h.tasks.push({ ...task(h, 2), id: id(6) })],
  ['handles', 'one client key was answered with two tasks', (h) => rec(h, 2).seenIds.add(id(6))],
  ['handles', 'a handle names a task the store does not hold', (h) => (rec(h, 4).taskId = id(7))],
  ['keys', 'an upstream call carries no idempotency key', (h) => (callOf(h, 1).meta = {})],
  [
    'keys',
    "an upstream call carries another task's key",
    (h) => (callOf(h, 2).args = { to: 'p3', cents: 7, ms: 10 }),
  ],
];
