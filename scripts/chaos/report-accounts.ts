// What each section tried, in the words of the report: [short what, short how many, the full account].
import type { AbuseStats } from './abuse/abuse-run.js';
import type { EdgeStats } from './edge/edge-run.js';
import type { CrashStats } from './crash/context.js';
import type { FaultStats } from './faults/fault-run.js';
import type { FuzzStats } from './fuzz/fuzz-run.js';
import type { GatewayStats } from './gateway/fleet.js';
import type { LoadStats } from './load/load-run.js';
import type { ParallelStats } from './parallel/run.js';
import type { OracleStats } from './oracles/run.js';
import { fmtInt, fmtMb, fmtMs, type Spread } from './stats.js';
import type {
  AbuseParams,
  ChaosParams,
  EdgeParams,
  FaultParams,
  FuzzParams,
  GatewayParams,
  LoadParams,
  ParallelParams,
  SectionEntry,
} from './types.js';

export type Account = [what: string, count: string, account: string];

const pts = (o: Record<string, number> | undefined): string =>
  Object.entries(o ?? {})
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${fmtInt(n)}`)
    .join(', ');

const pct = (x: number | undefined): string => `${Math.round((x ?? 0) * 100)} %`;
const sum = (o: Record<string, number> | undefined): number =>
  Object.values(o ?? {}).reduce((a, b) => a + b, 0);
const storeOf = (r: SectionEntry): string =>
  r.id.endsWith('sqlite') ? 'one SQLite file' : 'one PostgreSQL schema';

/** The retries, sleeps and keyed creations a crash section mixes in (nothing when it has none). */
function durableWorkload(p: ChaosParams): string {
  if (!((p.retryRate ?? 0) > 0 || (p.sleepRate ?? 0) > 0 || (p.keyRate ?? 0) > 0)) return '';
  return `Of these tasks, ${pct(p.retryRate)} have steps that fail their first 1–${p.failMax} attempts and are retried after backoffs of ${p.backoffMinMs}–${p.backoffMaxMs} ms (${pct(p.giveUpRate)} of them get too few attempts and must end with the step's last error as an isError result), and ${pct(p.sleepRate)} sleep ${p.sleepMsMin}–${p.sleepMsMax} ms between steps; ${pct(p.keyRate)} are created under an idempotency key, retried with the same key after every lost answer: ${pct(p.dropRate)} of those clients drop one or two answers on purpose (the request torn down right after its body was sent, a few ms later, or as the answer begins) and ${pct(p.hedgeRate)} send their first try to two processes at once. `;
}

/** What the retries, sleeps and keyed creations of a crash section came to. */
function durableFigures(s: Partial<CrashStats>): string {
  const d = s.durable;
  const k = s.keys;
  if (d === undefined || k === undefined) return '';
  const dropped = sum(k.dropped);
  return `Retries: ${fmtInt(d.failedAttempts)} failed attempts in ${fmtInt(d.retryTasks)} tasks, ${fmtInt(d.retries)} retries after a stored failure (${fmtInt(d.retriesElsewhere)} on another process than the failed attempt), ${fmtInt(d.gaveUp)} tasks gave up as planned; ${fmtInt(d.repeatedAttempts)} attempts begun again under the same number because a kill or a lost lease had interrupted them before their outcome (success or failure) was stored. Sleeps: ${fmtInt(d.sleeps)} ended in the ${fmtInt(d.sleepTasks)} tasks that sleep (${fmtInt(d.sleepsElsewhere)} on another process than the one that began them), waking p50 ${fmtMs(s.wakeLate?.p50)}, p99 ${fmtMs(s.wakeLate?.p99)} after their wake time (a due task waits for a free run slot like any other); ${fmtInt(d.statusSeen)} retry and sleep status messages seen by clients. Creations: ${fmtInt(k.keyed)} under a key; ${fmtInt(dropped)} answers dropped on purpose (${pts(k.dropped) || 'none'}) and ${fmtInt(k.lostToKills)} lost to kills, each retried with the same key (${fmtInt(k.joined)} calls were answered with the task a lost try had created, ${fmtInt(k.hedged)} first tries went to two processes at once): ${fmtInt(s.duplicates ?? 0)} duplicate tasks. `;
}

function oracles(s: Partial<OracleStats>): Account {
  return [
    'violations planted in synthetic histories and replies',
    `${fmtInt(s.planted ?? 0)} planted`,
    'The checkers themselves: consistent synthetic histories (one of them with a sleep, a retried step and a kill mid-attempt, created under an idempotency key) and a valid reply must pass; planted violations (a committed step run again, a stale commit, a run started after the stored result, a result chain differing from the stored steps, a lost answer, a task never ending, a duplicate creation, a skipped attempt number, an attempt run again after its failure was stored, a failure count differing from the plan, a sleep ending before its wake time or pushed back by a replay, a retry before its backoff, a second task or a second answer under one idempotency key, a schema-breaking, 5xx, mis-addressed or mis-statused reply) must each be reported by the invariant meant to catch it. Likewise the gateway checker: a consistent history (an idempotent call sent twice, a payment sent once, payments ended "outcome unknown" before and after their upstream call, one not sent) must pass, and a payment sent twice, a completed payment never sent or with another result, an idempotent result altered or failed, an outcome-unknown task sent twice or of an idempotent tool, an unexplained failure, a "not sent" task that was sent, a task never ending, a second task under a key, and an upstream call with a missing or foreign key must each be reported. Likewise the parallel-steps checker: a consistent history (a run killed after keeping some of its parallel steps, a run that replays them and runs the rest) must pass, and a committed parallel step run again by the run that took over, a kept effect logged twice or by another run than the value names, map items out of order in the result, a step missing from the store and a task ended failed must each be reported.',
  ];
}

function crash(r: SectionEntry, s: Partial<CrashStats>, p: ChaosParams): Account {
  const store = storeOf(r);
  return [
    `SIGKILL of ${p.servers} \`serve\` processes sharing ${store}, at chosen points`,
    `${fmtInt(s.kills ?? 0)} kills, ${fmtInt((s.storedTasks ?? 0) - (s.ttlProbes ?? 0))} tasks, ${fmtInt(s.runs ?? 0)} runs`,
    `${p.servers} \`serve\` processes on ${store} (lease ${p.leaseMs} ms, ${p.concurrency} runs each), killed with SIGKILL and restarted after 0–${p.restartMaxMs} ms, ${p.gapMinMs}–${p.gapMaxMs} ms apart. Clients keep ${p.inflight} tasks in flight through whichever processes are up (${p.stepsMin}–${p.stepsMax} memoized steps of ${p.stepMsMin}–${p.stepMsMax} ms, up to ${p.inputsMax} input requests each, ${Math.round(p.cancelRate * 100)} % cancelled at a random moment), plus TTL probes that must expire. ${durableWorkload(p)}Kills by point: ${pts(s.killsByPoint)} (mid-commit kills landed before the commit ${fmtInt(s.midCommit?.lostWithProcess ?? 0)} times, after it ${fmtInt(s.midCommit?.committedBeforeKill ?? 0)} times). ${fmtInt(s.storedTasks ?? 0)} tasks in the store (${fmtInt(s.completed ?? 0)} completed, ${fmtInt(s.cancelled ?? 0)} cancelled, ${fmtInt(s.ttlProbes ?? 0)} TTL probes; ${fmtInt(s.orphansAdopted ?? 0)} of them created by a tools/call without a key whose answer was lost), ${fmtInt(s.runs ?? 0)} runs (${fmtInt(s.crashReplays ?? 0)} replays after a crash, ${fmtInt(s.resumedRuns ?? 0)} after an answer, ${fmtInt(s.resumedAfterWait ?? 0)} after a retry backoff or a sleep; highest attempt ${fmtInt(s.maxAttempt ?? 0)}), ${fmtInt(s.stepExecutions ?? 0)} step bodies run for ${fmtInt(s.stepsCommitted ?? 0)} committed steps (the difference: ${fmtInt(s.durable?.failedAttempts ?? 0)} planned failures and ${fmtInt(s.stepReruns ?? 0)} bodies interrupted before their commit), ${fmtInt(s.answersChecked ?? 0)} answers checked. ${durableFigures(s)}Replay after a kill: p50 ${fmtMs(s.replayDelay?.p50)}, p99 ${fmtMs(s.replayDelay?.p99)}; every task had ended ${fmtMs(s.settleMs)} after the last kill. What clients saw and retried meanwhile: ${pts(s.transient) || 'nothing'}.`,
  ];
}

function clock(r: SectionEntry, s: Partial<CrashStats>, p: ChaosParams): Account {
  const store = storeOf(r);
  const offsets = (p.offsets ?? []).map((o) => `${o > 0 ? '+' : ''}${o / 1000} s`).join(', ');
  return [
    `wall-clock jumps of ${p.servers} \`serve\` processes sharing ${store}, forward and backward`,
    `${fmtInt(s.jumps ?? 0)} jumps, ${fmtInt((s.storedTasks ?? 0) - (s.ttlProbes ?? 0))} tasks, ${fmtInt(s.runs ?? 0)} runs`,
    `${p.servers} \`serve\` processes on ${store} (lease ${p.leaseMs} ms, ${p.concurrency} runs each) whose wall clocks (Date.now, preloaded by the suite; timers keep the monotonic clock, as in a real jump) are set off by ${offsets} in turn, one process at a time, every ${p.gapMinMs / 1000}–${p.gapMaxMs / 1000} s, then all set right. Clients keep ${p.inflight} tasks in flight (${p.stepsMin}–${p.stepsMax} memoized steps of ${p.stepMsMin}–${p.stepMsMax} ms, up to ${p.inputsMax} input requests each), plus TTL probes created where the clock is not ahead. ${fmtInt(s.storedTasks ?? 0)} tasks in the store (${fmtInt(s.completed ?? 0)} completed, ${fmtInt(s.ttlProbes ?? 0)} TTL probes), ${fmtInt(s.runs ?? 0)} runs, of which ${fmtInt(s.fencedRuns ?? 0)} were overtaken while running (a process whose clock ran ahead saw the lease as expired and took the task over; the fencing token stopped the older run at its next write), ${fmtInt(s.stepExecutions ?? 0)} step bodies run for ${fmtInt(s.stepsCommitted ?? 0)} committed steps, ${fmtInt(s.answersChecked ?? 0)} answers checked; every task had ended ${fmtMs(s.settleMs)} after the clocks were set right.`,
  ];
}

function faults(r: SectionEntry, s: Partial<FaultStats>, p: FaultParams): Account {
  if (r.id === 'faults-disk-full')
    return [
      'the SQLite file system fills up, then space returns',
      `${fmtInt(s.faults?.full ?? 0)} fills, ${fmtInt(s.requests ?? 0)} requests`,
      `One \`serve\` process under steady traffic with its SQLite file on a ${p.fullFsMb} MB tmpfs of its own, which the suite fills with a ballast file (${fmtMb(s.ballastBytes)} the last time) for ${p.fullHoldMs / 1000} s and then deletes, with one creation every 250 ms meanwhile. ${fmtInt(s.requests ?? 0)} requests, ${fmtInt(s.fullErrors ?? 0)} answered -32603 SQLITE_FULL (${pts(s.storeErrors)}), ${fmtInt(s.handles ?? 0)} task handles, ${fmtInt(s.tasksCompleted ?? 0)} tasks completed and ${fmtInt(s.tasksFailed ?? 0)} failed; slowest answer while full ${fmtMs(s.waitMax)}; recovery after the space returned ≤ ${fmtMs(s.recoveryP100)}.`,
    ];
  if (r.id.endsWith('postgres'))
    return [
      'PostgreSQL connections terminated, refused, reset, black-holed',
      `${fmtInt(sum(s.faults))} faults, ${fmtInt(s.requests ?? 0)} requests`,
      `One \`serve\` process reaches PostgreSQL through a loopback proxy of the suite, under steady traffic (tasks with steps and an input, created, polled and answered) and tools/list probes. Faults: ${pts(s.faults)} — terminate: pg_terminate_backend of exactly the server's backends, three times in a row while transactions start; refuse / reset: new connections refused or cut for ${p.outageMs / 1000} s; blackhole: bytes stop flowing for ${p.blackholeMs / 1000} s. ${fmtInt(s.requests ?? 0)} requests, ${fmtInt(sum(s.storeErrors))} answered -32603 (${pts(s.storeErrors)}), ${fmtInt(s.handles ?? 0)} task handles, ${fmtInt(s.tasksCompleted ?? 0)} tasks completed and ${fmtInt(s.tasksFailed ?? 0)} failed; recovery after each fault ≤ ${fmtMs(s.recoveryP100)}; slowest answer while the store was away ${fmtMs(s.waitMax)}; server crashes ${fmtInt(s.crashes ?? 0)} (restarted each time so the remaining faults still ran).`,
    ];
  return [
    'a foreign connection holds the SQLite write lock',
    `${fmtInt(s.faults?.busy ?? 0)} holds, ${fmtInt(s.requests ?? 0)} requests`,
    `One \`serve\` process under steady traffic while another connection holds the write lock (BEGIN IMMEDIATE) for ${p.busyHoldMs / 1000} s, well beyond the server's 5 s busy timeout, with a burst of 4 creations and one creation every 250 ms meanwhile. ${fmtInt(s.requests ?? 0)} requests, ${fmtInt(s.busyErrors ?? 0)} answered -32603 SQLITE_BUSY; slowest answer while locked ${fmtMs(s.waitMax)}, tools/list while locked up to ${fmtMs(s.listMaxDuringFault)}; recovery after the release ≤ ${fmtMs(s.recoveryP100)}.`,
  ];
}

function fuzz(s: Partial<FuzzStats>, p: FuzzParams): Account {
  return [
    'generated requests over the whole HTTP surface, then slowloris',
    `${fmtInt(s.requests ?? 0)} requests, ${fmtInt(s.slowSockets ?? 0)} slow sockets`,
    `Generated requests against one \`serve\` process (conformance, tasks and chaos tools): random JSON, strings and invalid UTF-8, truncated, random and near-valid messages (ids, methods, params, \`_meta\`, duplicated and sentinel headers), the tasks surface with real and forged ids, other HTTP methods and paths, 10k-deep nesting, ~1 MB values and 5 MB bodies — ${pts(s.byKind)}. HTTP statuses: ${pts(s.statuses)}${s.freshRetries ? ` (${fmtInt(s.freshRetries)} requests whose pooled fetch connection was reset were answered on a fresh connection)` : ''}. Then ${fmtInt(s.slowSockets ?? 0)} slowloris sockets for ${p.slowMs / 1000} s (probe p99 ${fmtMs(s.slowHealthP99)}). Server RSS ${fmtMb(s.rssStartBytes)} at the start, ${fmtMb(s.rssMaxBytes)} at most (${(s.rssSamples ?? []).map((b) => fmtMb(b)).join(' → ') || '–'} over the run), limit ${p.rssLimitMb} MB, V8 old space capped at ${p.heapMb ?? '–'} MB.`,
  ];
}

function load(s: Partial<LoadStats>, p: LoadParams): Account {
  const L: Partial<Record<string, Spread>> = s.latency ?? {};
  const q = (x: Spread | undefined): string =>
    x === undefined ? '–' : `p50 ${fmtMs(x.p50)}, p99 ${fmtMs(x.p99)}, max ${fmtMs(x.max)}`;
  return [
    `${fmtInt(p.tasks)} tasks polled at pollIntervalMs, ${fmtInt(p.subscribers)} push subscribers, ${p.seconds} s`,
    `${fmtInt(s.polls ?? 0)} polls, ${fmtInt(s.notifications ?? 0)} pushes`,
    `${fmtInt(s.tasks ?? 0)} tasks (a step, an input, a step) created in ${fmtMs(s.createMs)}, each polled by its own client every ${fmtInt(s.pollIntervalMs ?? 0)} ms (the pollIntervalMs the server suggested) and answered at a random moment of the ${p.seconds} s storm; ${fmtInt(s.subscribers ?? 0)} push subscribers (subscriptions/listen with taskIds) watch them all; tools/list and /healthz are probed every ${p.probeEveryMs} ms. ${fmtInt(s.polls ?? 0)} polls (${fmtInt(s.pollsPerSecond ?? 0)}/s), ${fmtInt(s.updates ?? 0)} answers, ${fmtInt(s.notifications ?? 0)} pushes. Latency — tools/call (create): ${q(L.create)}; tasks/get: ${q(L.get)}; tasks/update: ${q(L.update)}; tools/list: ${q(L.list)}; /healthz: ${q(L.health)}; answer → pushed completion: ${q(L.push)}. Server RSS ${fmtMb(s.rssStartBytes)} → max ${fmtMb(s.rssMaxBytes)} (end ${fmtMb(s.rssEndBytes)}).`,
  ];
}

function abuse(r: SectionEntry, s: AbuseStats, p: AbuseParams): Account {
  return [
    `attacks by one principal on ${storeOf(r)} with an encryption key, a victim in another tenant`,
    `${fmtInt(p.floodTasks)} tasks, ${fmtInt(p.listens)} listens, ${fmtInt(p.uploads)} uploads`,
    `The attacker queues ${fmtInt(p.floodTasks)} tasks that each hold one of ${p.concurrency} workers for ${p.workMs} ms (${fmtInt(s.floodCreated ?? 0)} accepted, ${fmtInt(s.floodRefused ?? 0)} refused by a quota), then at once opens ${fmtInt(p.listens)} listen streams (${fmtInt(s.listensRefused ?? 0)} refused), sends ${fmtInt(p.uploads)} unauthenticated bodies of 3.9 MiB (${fmtInt(s.uploadsRefused ?? 0)} refused before buffering), opens ${fmtInt(p.sessionLimit + 10)} legacy sessions against a cap of ${fmtInt(p.sessionLimit)} (${fmtInt(s.sessionsRefused ?? 0)} refused) with ${p.bloatSubscribes} subscriptions of 3 MiB on one and ${fmtInt(p.unserializable)} calls of tools with unserializable results, while a bystander of the attacker's tenant runs create-and-cancel cycles against a storage quota of ${fmtInt(p.storedLimit)} (${fmtInt(s.storedAccepted ?? 0)} accepted). The victim's tools/list p99 went from ${fmtMs(s.idleListP99Ms)} idle to ${fmtMs(s.attackListP99Ms)}; its task took ${fmtMs(s.aloneTaskMs)} alone and ${fmtMs(s.behindBacklogMs)} behind the backlog. Server RSS max ${fmtMb(s.rssMaxBytes)}. A canary sent in arguments, status texts, errors, client capabilities and legacy session state was looked for in ${fmtInt(s.scannedFiles ?? 0)} store files (${fmtMb(s.storeBytes)}).`,
  ];
}

function edge(r: SectionEntry, s: EdgeStats, p: EdgeParams): Account {
  const client = `The ${r.id === 'idle-connections' ? 'legitimate client' : "other tenant's client"} (tools/list and /healthz in turn, each on a new connection from 127.0.0.2, every ${p.probeEveryMs} ms) got ${fmtInt((s.legitRequests ?? 0) - (s.legitFailures ?? 0))} of ${fmtInt(s.legitRequests ?? 0)} answers, p99 ${fmtMs(s.attackP99Ms)} (idle ${fmtMs(s.idleP99Ms)}).`;
  if (r.id === 'idle-connections')
    return [
      `connections without credentials from one address, more than --max-connections, idle`,
      `${fmtInt(s.attackerOpened ?? 0)} connections`,
      `For ${p.attackMs / 1000} s, 127.0.0.1 keeps ${p.idleSockets} connections to a server with --max-connections ${p.maxConnections} and --headers-timeout-ms ${p.headersTimeoutMs}: half send nothing, half send one GET /healthz and idle on the kept-alive connection; each opens again ${p.reopenMs} ms after the server closes it. ${fmtInt(s.attackerOpened ?? 0)} opened, at most ${fmtInt(s.attackerPeakOpen ?? 0)} at once; ${fmtInt(s.attackerTimedOut ?? 0)} got 408 at the headers timeout, ${fmtInt(s.attackerClosedQuietly ?? 0)} silent and ${fmtInt(s.attackerKeptClosed ?? 0)} kept-alive ones were closed to make room or refused; a silent one lived ${fmtMs(s.silentLifeMaxMs)} at most. ${client}`,
    ];
  return [
    'event streams opened by two operators, far beyond their caps, while tasks change',
    `${fmtInt(s.streamAttempts ?? 0)} stream attempts`,
    `For ${p.attackMs / 1000} s, two operators of tenant A open event streams four at a time (up to ${fmtInt(p.streamAttempts)} each) on a server with --max-admin-streams ${p.maxAdminStreams}, --max-admin-streams-total ${p.maxAdminStreamsTotal} and --max-connections ${p.maxConnections}, keeping every stream they get, while a user of tenant A creates a task every 100 ms. ${fmtInt(s.streamsHeld ?? 0)} streams held, ${fmtInt(s.streamsRefused ?? 0)} refused with 429; ${fmtInt(s.eventsDelivered ?? 0)} task events delivered to them. ${client}`,
  ];
}

function gateway(r: SectionEntry, s: Partial<GatewayStats>, p: GatewayParams): Account {
  const k = s.kills ?? { gateway: 0, 'http-upstream': 0, 'stdio-upstream': 0 };
  const unknown = s.unknown ?? [];
  const listed =
    unknown.length === 0
      ? 'none'
      : unknown
          .map((u) => `\`${u.taskId}\` (${u.calls} upstream call${u.calls === 1 ? '' : 's'})`)
          .join(', ');
  return [
    `SIGKILL of \`gateway\` replicas sharing ${storeOf(r)}, of their HTTP upstream and of stdio upstream children`,
    `${fmtInt(k.gateway + k['http-upstream'] + k['stdio-upstream'])} kills, ${fmtInt(s.tasks ?? 0)} tasks`,
    `${p.gateways} \`durable-mcp gateway\` replicas on ${storeOf(r)} (lease ${p.leaseMs} ms, ${p.concurrency} runs each, \`--upstream-retry ${p.upstreamRetry}\`) in front of an MCP server written with the official SDK v1: ${p.gateways - p.stdioGateways} reach one HTTP upstream process, ${p.stdioGateways} run${p.stdioGateways === 1 ? 's' : ''} it as a stdio child each. Clients keep ${p.inflight} calls in flight (at most ${fmtInt(p.tasks)} in all), ${pct(p.paymentRate)} of the non-idempotent send_payment and the others of the idempotent slow_sum, each working ${p.msMin}–${p.msMax} ms upstream, created under a key of their own (asked again after every lost answer) and followed with tasks/get. Kills, ${p.gapMinMs}–${p.gapMaxMs} ms apart and mostly right after a call reached the upstream: ${fmtInt(k.gateway)} of a replica (restarted after 0–${p.restartMaxMs} ms), ${fmtInt(k['http-upstream'])} of the HTTP upstream (started again on its port after 0–${p.restartMaxMs} ms), ${fmtInt(k['stdio-upstream'])} of a stdio child (the replica starts another). ${fmtInt(s.tasks ?? 0)} tasks (${pts(s.byTool)}) ended ${pts(s.byStatus)}; the upstream received ${fmtInt(s.upstreamCalls ?? 0)} calls, ${fmtInt(s.resent ?? 0)} idempotent calls were sent again (at most ${fmtInt(s.maxCallsPerTask ?? 0)} calls for one task). Outcome unknown (non-idempotent calls a kill interrupted, left for an operator to check): ${fmtInt(unknown.length)} — ${listed}. Not sent: ${fmtInt(s.notSent ?? 0)}. Every task had ended ${fmtMs(s.settleMs)} after the last kill. What clients saw and retried meanwhile: ${pts(s.transient) || 'nothing'}.`,
  ];
}

function parallel(r: SectionEntry, s: Partial<ParallelStats>, p: ParallelParams): Account {
  return [
    `SIGKILL of \`serve\` processes sharing ${storeOf(r)} while tasks run steps in parallel`,
    `${fmtInt(s.kills ?? 0)} kills, ${fmtInt(s.tasks ?? 0)} tasks`,
    `${p.servers} \`durable-mcp serve\` processes on ${storeOf(r)} (lease ${p.leaseMs} ms, ${p.concurrency} runs each) run ${fmtInt(p.tasks)} chaos_parallel tasks (${p.inflight} clients creating them under idempotency keys): a step, then \`ctx.map\` over ${p.items} items (${p.mapConcurrency} at once, each working ${p.stepMs}–${p.stepMs * 3} ms so that they end out of order) beside another step, then a last step; every body logs its effect with a fresh nonce. A process is SIGKILLed every ${p.gapMinMs}–${p.gapMaxMs} ms (${fmtInt(s.kills ?? 0)} kills) and restarted after 0–${p.restartMaxMs} ms. ${fmtInt(s.runs ?? 0)} runs; ${fmtInt(s.partialReplays ?? 0)} runs replayed some of the parallel steps from the store and ran the others; ${fmtInt(s.rerunBodies ?? 0)} bodies were begun again because a kill had cut an earlier one short before its value was kept. Every task had ended ${fmtMs(s.settleMs)} after the last kill.`,
  ];
}

/** [short what, short how many, the full account] of a section. */
export function tried(r: SectionEntry): Account {
  const s = r.stats;
  switch (r.kind) {
    case 'oracles':
      return oracles(s);
    case 'crash':
      return crash(r, s, r.params as ChaosParams);
    case 'clock':
      return clock(r, s, r.params as ChaosParams);
    case 'faults':
      return faults(r, s, r.params as FaultParams);
    case 'fuzz':
      return fuzz(s, r.params as FuzzParams);
    case 'load':
      return load(s, r.params as LoadParams);
    case 'abuse':
      return abuse(r, s, r.params as AbuseParams);
    case 'edge':
      return edge(r, s, r.params as EdgeParams);
    case 'gateway':
      return gateway(r, s, r.params as GatewayParams);
    case 'parallel':
      return parallel(r, s, r.params as ParallelParams);
  }
}
