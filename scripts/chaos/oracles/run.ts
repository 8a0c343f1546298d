// Section 0: the oracles check themselves. Clean synthetic histories must pass the crash checker, and each planted
// violation (a memoized step run again, a stale run's commit, a lost answer, a duplicate creation, a retried attempt
// numbered wrong, a sleep ending early, a second task under one idempotency key, …) must be caught by the invariant
// meant to catch it; likewise the gateway checker (a payment sent twice, an idempotent result altered, an outcome-
// unknown task sent twice, an unexplained failure, …), the parallel-steps checker (a committed parallel step run
// again, a kept effect logged twice, items out of order, …), and the fuzz oracle must reject invalid, 5xx and mis-addressed
// replies. A chaos run that cannot fail proves nothing.
import { check } from '../../../test/support/fuzz-model.js';
import type { PostResult } from '../../../test/support/http.js';
import { analyse } from '../crash/analyse.js';
import { CRASH_INVARIANTS } from '../crash/invariants.js';
import { checkGateway } from '../gateway/check.js';
import { GATEWAY_INVARIANTS } from '../gateway/invariants.js';
import { Invariants } from '../harness/invariants.js';
import { now } from '../harness/time.js';
import type { SectionResult, SectionStats } from '../types.js';
import { cleanGatewayHistory, PLANTED_GATEWAY } from './gateway-history.js';
import { byTask, checkTask, PARALLEL_INVARIANTS } from '../parallel/check.js';
import { cleanParallelHistory, PLANTED_PARALLEL, type ParallelHistory } from './parallel-history.js';
import { cleanHistory, durableHistory, type History } from './histories.js';
import { PLANTED, PLANTED_DURABLE } from './plants.js';

export interface OracleStats extends SectionStats {
  planted: number;
}

export const ORACLE_INVARIANTS: Readonly<Record<string, string>> = {
  'clean-passes': 'consistent synthetic histories (and valid replies) pass every check',
  'planted-caught': 'every planted violation is reported by the invariant meant to catch it',
};

function judge(h: History): Invariants {
  const inv = new Invariants();
  analyse({
    store: h.store,
    lines: h.lines,
    byTask: new Map([[h.rec.taskId as string, h.rec]]),
    recs: [h.rec],
    sentCids: new Set([h.rec.cid]),
    unknownCids: new Set(),
    kills: [],
    inv,
    params: {},
  });
  return inv;
}

/** The crash checker passes the clean histories and reports each planted violation; returns the plants tried. */
function checkCrashOracle(inv: Invariants): number {
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
    ...PLANTED.map((p) => [cleanHistory, ...p] as const),
    ...PLANTED_DURABLE.map((p) => [durableHistory, ...p] as const),
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
  return plants.length;
}

/** The gateway checker passes the clean gateway history and reports each planted violation; returns the plants tried. */
function checkGatewayOracle(inv: Invariants): number {
  for (const i of checkGatewayInvariants(cleanGatewayHistory()).toJSON())
    inv.expect(
      'clean-passes',
      i.failures.length === 0,
      () => `gateway checker: ${i.name} flags a clean history: ${i.failures[0]}`,
    );
  for (const [name, what, plant] of PLANTED_GATEWAY) {
    const h = cleanGatewayHistory();
    plant(h);
    const got = checkGatewayInvariants(h).list.get(name);
    inv.expect(
      'planted-caught',
      got !== undefined && got.failures.length > 0,
      `gateway checker: "${what}" not reported by ${name}`,
    );
    if (!(name in GATEWAY_INVARIANTS)) inv.fail('planted-caught', `unknown invariant ${name}`);
  }
  return PLANTED_GATEWAY.length;
}

const checkParallelInvariants = (h: ParallelHistory): Invariants => {
  const inv = new Invariants();
  checkTask(
    inv,
    { rerunBodies: 0, partialReplays: 0 },
    h.items,
    h.task,
    h.steps,
    byTask(h.lines).get(h.task.id),
  );
  return inv;
};

/** The parallel checker passes the clean history and reports each planted violation; returns the plants tried. */
function checkParallelOracle(inv: Invariants): number {
  for (const i of checkParallelInvariants(cleanParallelHistory()).toJSON())
    inv.expect(
      'clean-passes',
      i.failures.length === 0,
      () => `parallel checker: ${i.name} flags a clean history: ${i.failures[0]}`,
    );
  for (const [name, what, plant] of PLANTED_PARALLEL) {
    const h = cleanParallelHistory();
    plant(h);
    const got = checkParallelInvariants(h).list.get(name);
    inv.expect(
      'planted-caught',
      got !== undefined && got.failures.length > 0,
      `parallel checker: "${what}" not reported by ${name}`,
    );
    if (!(name in PARALLEL_INVARIANTS)) inv.fail('planted-caught', `unknown invariant ${name}`);
  }
  return PLANTED_PARALLEL.length;
}

const checkGatewayInvariants = (h: Parameters<typeof checkGateway>[0]): Invariants => {
  const inv = new Invariants();
  checkGateway(h, inv);
  return inv;
};

const reply = (status: number, msg: object): PostResult => ({
  status,
  headers: new Headers({ 'content-type': 'application/json' }),
  text: JSON.stringify(msg),
  messages: [msg],
  truncated: false,
  contentType: 'application/json',
});

/** The fuzz oracle passes a valid reply and rejects bad ones; returns the bad replies tried. */
function checkFuzzOracle(inv: Invariants): number {
  const request = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
  const sent = { parsed: request, label: JSON.stringify(request) };
  const good = check(
    sent,
    reply(200, { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params' } }),
  );
  inv.expect('clean-passes', good === undefined, () => `fuzz oracle rejects a valid reply: ${good?.why}`);
  const bad: [string, PostResult][] = [
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
    inv.expect('planted-caught', check(sent, res) !== undefined, `fuzz oracle accepts ${what}`);
  }
  return bad.length;
}

export async function runOracles(): Promise<SectionResult> {
  const inv = Invariants.of(ORACLE_INVARIANTS);
  const started = now();
  const total =
    checkCrashOracle(inv) + checkGatewayOracle(inv) + checkParallelOracle(inv) + checkFuzzOracle(inv);
  const stats: OracleStats = {
    planted: total,
    durationMs: now() - started,
    summaryLine: `${total} planted violations, four clean histories and a valid reply`,
  };
  return { inv, stats };
}
