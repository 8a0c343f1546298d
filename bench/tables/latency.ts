// The latency table of latest.md (tasks/get round trips, push, stored tasks, wake-ups) and its notes.
import { PUSH_GROUPS, PUSH_STREAMS, WAKE_LEAD_MS, WAKES_PER_SECOND } from '../config.js';
import { fmtInt } from '../format.js';
import { SLOW_STEP_MS } from '../stats.js';
import type { LatencyRow, PooledStats, PushFigures } from '../types-rows.js';

/** A figure to three decimals ('–' for a percentile of no events). */
const fix3 = (n: number | null | undefined) => (n == null ? '–' : n.toFixed(3));

const fmtRatios = (r: LatencyRow) =>
  r.baseline === null || r.ratio == null
    ? '1.00 / 1.00 (baseline)'
    : `${r.ratio.p50.toFixed(2)} / ${r.ratio.p99.toFixed(2)} × ${r.baseline}`;

const fmtTarget = (r: LatencyRow) =>
  r.target === undefined
    ? '–'
    : `${r.target.text}: ${r.target.vs === undefined || r.target.ratio === undefined ? '' : `${r.target.ratio.p99.toFixed(2)} × → `}` +
      `**${r.target.met ? 'met' : 'not met'}**`;

const cells = (values: Array<string | number>) => ['', ...values, ''].join(' | ').trim();

/** A push row's poller: its round trips, compared with the row's baseline like the push row itself. */
function pollLine(r: LatencyRow, poll: PooledStats, rows: LatencyRow[]): string {
  const base = rows.find((x) => x.name === r.baseline);
  const vsBase =
    base === undefined
      ? '–'
      : `${(Number(poll.p50) / Number(base.p50)).toFixed(2)} / ${(Number(poll.p99) / Number(base.p99)).toFixed(2)} × ${r.baseline}`;
  return cells([
    `↳ tasks/get round trip of a poller during those rounds`,
    fmtInt(poll.events),
    fix3(poll.p50),
    fix3(poll.p99),
    `${fix3(poll.p99Range.min)}–${fix3(poll.p99Range.max)}`,
    fix3(poll.max),
    vsBase,
    '–',
  ]);
}

function rowLines(r: LatencyRow, rows: LatencyRow[]): string[] {
  const line = cells([
    r.name,
    fmtInt(r.events),
    fix3(r.p50),
    fix3(r.p99),
    `${fix3(r.p99Range.min)}–${fix3(r.p99Range.max)}`,
    fix3(r.max),
    fmtRatios(r),
    fmtTarget(r),
  ]);
  return r.poll === undefined ? [line] : [line, pollLine(r, r.poll, rows)];
}

const LATENCY_NOTE =
  'Percentiles over every timed event of every round (client-side monotonic clock, 0.001 ms). tasks/get: one ' +
  'request at a time over one keep-alive connection, polling input_required tasks (the stored-task rows: ' +
  'completed tasks sampled from the whole store, another one per request). Push: ' +
  `${PUSH_STREAMS} SSE streams, each watching the tasks of one of ${PUSH_GROUPS} groups (each transition ` +
  `reaches ${PUSH_STREAMS / PUSH_GROUPS} streams); tasks answered one at a time; per stream and task, ` +
  'each event timed from the commit of its transition (`working`: the answer that resumed the task; ' +
  "`completed`: the run's final write) to the moment the subscriber parsed it. The commit time is the " +
  "server's CLOCK_MONOTONIC reading in the first listener of the store's change feed, right after the " +
  'commit and before any subscriber is told (bench/children/push-server.ts); the client reads the same clock. ' +
  "With replicas: the earliest such reading over them (a process learns of another's commit through " +
  'NOTIFY), or the first event showing the change if that came sooner (a read on one replica can see a ' +
  'commit before any process has learnt of it). ' +
  'Poller: during the same rounds, one more client polls tasks/get of the task being answered, one request ' +
  'at a time, back to back, over its own connection: the round trip a client pays at that load instead of ' +
  'subscribing. The latency rows run in a client process of their own (bench/children/latency-client.ts), ' +
  'which keeps the stream chunks unparsed, with their arrival time, until the timed steps are over. ' +
  'Operator list: GET /admin/api/v1/tasks?tool=…&limit=50, one request at a time over one keep-alive ' +
  'connection, each for another of the tools the stored tasks are spread over (a full page, newest first).';

function wakeNote(r: LatencyRow & Required<Pick<LatencyRow, 'interval'>>): string {
  return (
    `- ${r.name}: ${fmtInt(r.events)} sample tasks woke (${Math.round(WAKES_PER_SECOND)} per second of ` +
    `run, their wake times spread evenly over the run's length from ${WAKE_LEAD_MS} ms after it started); ` +
    `from its wake time to its handler resuming p50 ${r.p50} ms, p99 ${r.p99} ms: ${r.interval.p50} / ${r.interval.p99} × the ` +
    `pollIntervalMs the server gave them (${fmtInt(r.interval.ms)} ms). ` +
    (r.missed === 0
      ? 'Every sample task had begun its sleep before its wake time.'
      : `${fmtInt(Number(r.missed))} more began their first run only after their wake time (they never slept) and are not counted.`)
  );
}

function runQueueNote(q: PushFigures['runQueue']): string {
  if (q == null) return '';
  return (
    ` While the events of a task were on their way, the push client waited for a core (its run-queue ` +
    `time, /proc/self/schedstat) ${q.slowWaitMs ?? '–'} ms on average in the ` +
    `${fmtInt(q.slowSteps)} tasks whose slowest event took over ${SLOW_STEP_MS} ms, and ` +
    `${q.fastWaitMs ?? '–'} ms in the other ${fmtInt(q.steps - q.slowSteps)}.`
  );
}

function pushNote(r: LatencyRow, push: PushFigures): string {
  const { working: w, completed: c } = push.byStatus;
  const cause = push.fromCause;
  const { first, last } = push.server;
  const found = push.discovery;
  return (
    `- ${r.name}: from the commit, \`working\` events p50 ${w.p50} ms, p99 ${w.p99} ms; \`completed\` ` +
    `events p50 ${c.p50} ms, p99 ${c.p99} ms.` +
    ` From what caused them: \`working\` from just before the tasks/update request was sent p50 ` +
    `${cause.working.p50} ms, p99 ${cause.working.p99} ms; \`completed\` from the handler's return ` +
    `(before the completion commit) p50 ${cause.completed.p50} ms, p99 ${cause.completed.p99} ms.` +
    ` The tasks/update round trip itself (the write that commits \`working\`): p50 ${push.updateP50} ms, ` +
    `p99 ${push.updateP99} ms (medians over rounds). ${fmtInt(push.coalesced)} \`working\` events were ` +
    'coalesced into the `completed` one (the stream was sent the later state). The server passed the ' +
    `first of a transition's ${PUSH_STREAMS / PUSH_GROUPS} events to its socket p50 ${first.p50} ms, ` +
    `p99 ${first.p99} ms after the commit, and the last p50 ${last.p50} ms, p99 ` +
    `${last.p99} ms (${fmtInt(last.events)} transitions). The poller first showed ` +
    `\`working\` p50 ${found.working.p50} ms, p99 ${found.working.p99} ms and \`completed\` ` +
    `p50 ${found.completed.p50} ms, p99 ${found.completed.p99} ms after their commits ` +
    `(${fmtInt(found.working.events)} and ${fmtInt(found.completed.events)} of ` +
    `${fmtInt(push.answered)} answered tasks: it polls one task at a time and moves on with the answers).` +
    runQueueNote(push.runQueue)
  );
}

/** The push figures of a push row (whose `server` field holds the server's share). */
function pushFiguresOf(r: LatencyRow): PushFigures | undefined {
  if (r.byStatus === undefined || typeof r.server !== 'object') return undefined;
  return { ...(r as Omit<LatencyRow, 'server'> & PushFigures), server: r.server };
}

export function latencyTable(rows: LatencyRow[]): string[] {
  const lines = [
    '### Latency',
    '',
    '| row | events | p50 ms | p99 ms | p99 min–max over rounds | max ms | ratio p50 / p99 vs baseline | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows.flatMap((r) => rowLines(r, rows)),
    '',
    LATENCY_NOTE,
  ];
  const rates = rows.filter((r) => r.opsPerSecond !== undefined);
  if (rates.length > 0) {
    lines.push(
      '',
      '- Stored-task rows, requests per second of their one sequential client (median over rounds): ' +
        rates.map((r) => `${r.name} ${fmtInt(r.opsPerSecond!)} ops/s`).join('; ') +
        '.',
    );
  }
  for (const r of rows) {
    if (r.interval !== undefined) lines.push('', wakeNote({ ...r, interval: r.interval }));
  }
  for (const r of rows) {
    const push = pushFiguresOf(r);
    if (push !== undefined) lines.push('', pushNote(r, push));
  }
  return lines;
}
