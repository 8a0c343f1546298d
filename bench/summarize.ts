// From the rounds' samples to the report's rows: medians or pooled percentiles per row, then the ratios against
// the rows each is compared with and whether its targets are met.
import { MEM_STREAMS } from './config.js';
import { median, pooledByStatus, pooledStats, ratio, round1, runQueueSummary, sum } from './stats.js';
import type { FootprintRow, LatencyRow, MemoryRow, Row, TargetResult, ThroughputRow } from './types-rows.js';
import type {
  FootprintSample,
  FootprintScenario,
  LatencySample,
  LatencyScenario,
  MemorySample,
  MemoryScenario,
  Rounded,
  Sample,
  Scenario,
  ThroughputSample,
} from './types.js';

/** The pg rows' own figures: writing commits and where the CPU went (each median over rounds). */
const PG_FIGURES = [
  'xactsPerOp',
  'batchTasks',
  'batchMs',
  'pgCpuUs',
  'pgAllCpuUs',
  'loadCpuUs',
  'kernelUs',
  'busyCores',
  'otherCores',
  'windowS',
] as const;

/**
 * The median over rounds of each of `keys` that some round has: null unless every round has a number (a machine
 * without /proc gives nulls, which the notes say); absent when no round has the key (rows that do not measure it).
 */
function optionalMedians<K extends string>(
  list: Array<Partial<Record<K, number | null>>>,
  keys: readonly K[],
): Partial<Record<K, number | null>> {
  const out: Partial<Record<K, number | null>> = {};
  for (const key of keys) {
    if (!list.some((x) => x[key] !== undefined)) continue;
    const values = list.map((x) => x[key]);
    out[key] = values.every((v) => typeof v === 'number')
      ? Math.round(median(values as number[]) * 1000) / 1000
      : null;
  }
  return out;
}

/** A throughput row: medians over rounds; `also` and `targets` get their ratios in `summarize`. */
function summarizeOne(scenario: Scenario, list: Array<Rounded<ThroughputSample>>): ThroughputRow {
  const rps = list.map((x) => x.rps);
  const also = scenario.kind === undefined ? scenario.also : undefined;
  const targets = scenario.kind === undefined ? scenario.targets : undefined;
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    ...(also === undefined ? {} : { also: also.map((name) => ({ name, ratio: null })) }),
    ...(targets === undefined ? {} : { targets: targets.map((t) => ({ ...t, ratio: null, met: null })) }),
    unit: 'request' in scenario ? '2xx responses/s' : 'statements/s',
    samples: list,
    median: {
      rps: round1(median(rps)),
      p50: median(list.map((x) => x.p50)),
      p99: median(list.map((x) => x.p99)),
      cpuUs: list.every((x) => typeof x.cpuUs === 'number') ? median(list.map((x) => x.cpuUs!)) : null,
      writtenKb: list.every((x) => typeof x.writtenKb === 'number')
        ? median(list.map((x) => x.writtenKb!))
        : null,
      ...optionalMedians(list, PG_FIGURES),
    },
    min: { rps: Math.min(...rps) },
    max: { rps: Math.max(...rps) },
    non2xx: sum(list.map((x) => x.non2xx)),
    errors: sum(list.map((x) => x.errors + x.timeouts)),
    ...(list.some((x) => x.backlog !== undefined)
      ? {
          drain: {
            maxBacklog: Math.max(...list.map((x) => x.backlog!)),
            maxMs: Math.max(...list.map((x) => x.drainMs!)),
          },
        }
      : {}),
  };
}

/** A memory row: medians over rounds of the per-stream growth. */
function summarizeMemory(scenario: MemoryScenario, list: Array<Rounded<MemorySample>>): MemoryRow {
  const bytes = list.map((x) => x.bytesPerStream);
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    kind: 'memory',
    unit: 'bytes per open stream (V8 heap used + external, after a full GC)',
    streams: MEM_STREAMS,
    samples: list,
    median: {
      bytesPerStream: median(bytes),
      heapPerStream: median(list.map((x) => x.heapPerStream)),
      externalPerStream: median(list.map((x) => x.externalPerStream)),
      rssPerStream: median(list.map((x) => x.rssPerStream)),
    },
    min: { bytesPerStream: Math.min(...bytes) },
    max: { bytesPerStream: Math.max(...bytes) },
    non2xx: 0,
    errors: 0,
  };
}

/** The push rows' figures pooled over rounds (streams by status, causes, poller, run queue, server share). */
function pushFigures(list: LatencySample[]) {
  const extra = (field: 'updateP50' | 'updateP99') =>
    list.every((x) => x[field] !== undefined)
      ? Math.round(median(list.map((x) => Number(x[field]))) * 1000) / 1000
      : undefined;
  return {
    byStatus: pooledByStatus(list, (x) => x.byStatus),
    fromCause: pooledByStatus(list, (x) => x.fromCause),
    coalesced: sum(list.map((x) => x.coalesced!)),
    answered: sum(list.map((x) => x.steps!)),
    poll: pooledStats(list.map((x) => x.pollRtt!)),
    runQueue: runQueueSummary(list.flatMap((x) => x.stepWaits ?? [])),
    discovery: pooledByStatus(list, (x) => x.discovered),
    server: {
      first: pooledStats(list.map((x) => x.serverShare!.first)),
      last: pooledStats(list.map((x) => x.serverShare!.last)),
    },
    updateP50: extra('updateP50'),
    updateP99: extra('updateP99'),
  };
}

/** A latency row: percentiles over every event of every round (not medians of per-round percentiles). */
function summarizeLatency(scenario: LatencyScenario, list: Array<Rounded<LatencySample>>): LatencyRow {
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    kind: 'latency',
    unit: 'ms per event',
    // Per round, its figures without the per-event lists (those are pooled below).
    samples: list.map((x) =>
      Object.fromEntries(Object.entries(x).filter(([, v]) => typeof v !== 'object' || v === null)),
    ),
    ...pooledStats(list.map((x) => x.latencies)),
    ...(list.some((x) => x.byStatus !== undefined) ? pushFigures(list) : {}),
    ...(list.every((x) => x.intervalMs !== undefined)
      ? { intervalMs: Math.max(...list.map((x) => x.intervalMs!)), missed: sum(list.map((x) => x.missed!)) }
      : {}),
    ...(scenario.target === undefined ? {} : { target: { ...scenario.target } }),
    // The stored-task rows: sequential requests per second, the median over rounds.
    ...(scenario.needs === 'scale' || scenario.needs === 'pg-scale'
      ? { opsPerSecond: round1(median(list.map((x) => x.rps))) }
      : {}),
    non2xx: 0,
    errors: 0,
  };
}

/** A sleeping-task memory row: medians over rounds of what the server added to its process since it started. */
function summarizeFootprint(
  scenario: FootprintScenario,
  list: Array<Rounded<FootprintSample>>,
): FootprintRow {
  const rss = list.map((x) => x.rssGrowth);
  return {
    name: scenario.name,
    server: scenario.server,
    baseline: scenario.baseline,
    kind: 'footprint',
    unit: 'bytes the server process grew by since the memory probe loaded (after a full GC)',
    samples: list,
    sleeping: Math.max(...list.map((x) => x.sleeping)),
    median: {
      rssGrowth: median(rss),
      heapGrowth: median(list.map((x) => x.heapGrowth)),
      rss: median(list.map((x) => x.rss)),
    },
    min: { rssGrowth: Math.min(...rss) },
    max: { rssGrowth: Math.max(...rss) },
    ...(scenario.target === undefined ? {} : { target: { ...scenario.target } }),
    non2xx: 0,
    errors: 0,
  };
}

/** One row from its rounds' samples (each list holds the samples of the row's own kind). */
function summarizeRow(scenario: Scenario, list: Array<Rounded<Sample>>): Row {
  switch (scenario.kind) {
    case 'latency':
      return summarizeLatency(scenario, list as Array<Rounded<LatencySample>>);
    case 'memory':
      return summarizeMemory(scenario, list as Array<Rounded<MemorySample>>);
    case 'footprint':
      return summarizeFootprint(scenario, list as Array<Rounded<FootprintSample>>);
    default:
      return summarizeOne(scenario, list as Array<Rounded<ThroughputSample>>);
  }
}

/** A target's ratio against its row (ops/s, or CPU µs/op for `maxCpu`), and whether it is met; null unmeasured. */
function rateTarget(row: ThroughputRow, target: TargetResult, byName: Map<string, Row>): TargetResult {
  const other = byName.get(target.vs);
  const median = other?.kind === undefined ? other?.median : undefined;
  if (target.maxCpu === undefined) {
    const r = median === undefined ? null : ratio(row.median.rps, median.rps);
    return { ...target, ratio: r, met: r === null ? null : r >= target.min };
  }
  const cpu = row.median.cpuUs;
  const vsCpu = median?.cpuUs;
  const r = cpu === null || vsCpu == null || vsCpu <= 0 ? null : ratio(cpu, vsCpu);
  return { ...target, ratio: r, met: r === null ? null : r <= target.maxCpu };
}

function rateThroughput(row: ThroughputRow, base: Row | undefined, byName: Map<string, Row>): void {
  const rps = (r: Row | undefined) => (r?.kind === undefined ? r?.median.rps : undefined);
  const baseRps = rps(base);
  row.ratio = baseRps === undefined ? null : ratio(row.median.rps, baseRps);
  const vs = (name: string) => {
    const other = rps(byName.get(name));
    return other === undefined ? null : ratio(row.median.rps, other);
  };
  if (row.also !== undefined) row.also = row.also.map(({ name }) => ({ name, ratio: vs(name) }));
  if (row.targets !== undefined) row.targets = row.targets.map((t) => rateTarget(row, t, byName));
}

function rateLatency(row: LatencyRow, base: LatencyRow | undefined): void {
  row.ratio = base === undefined ? null : { p50: ratio(row.p50, base.p50), p99: ratio(row.p99, base.p99) };
  if (row.poll !== undefined) {
    row.poll.ratio = { p50: ratio(row.p50, row.poll.p50), p99: ratio(row.p99, row.poll.p99) };
  }
  if (row.intervalMs !== undefined) {
    row.interval = {
      ms: row.intervalMs,
      p50: ratio(row.p50, row.intervalMs),
      p99: ratio(row.p99, row.intervalMs),
    };
  }
  // A target is against the baseline row, with `vs: 'poll'` against the round trips of the row's own poller, with
  // `vs: 'interval'` against the poll interval the server advertised for the row's tasks.
  const against =
    row.target?.vs === undefined
      ? row.ratio
      : { poll: row.poll?.ratio, interval: row.interval }[row.target.vs];
  if (row.target !== undefined && against != null) {
    const { p50Ratio, p99Ratio } = row.target;
    row.target.ratio = against;
    row.target.met =
      (p99Ratio === undefined || against.p99 < p99Ratio) &&
      (p50Ratio === undefined || against.p50 <= p50Ratio);
  }
}

/** The rows of `scenarios` from their samples, with their ratios against each other and against `known` rows. */
export function summarize(
  scenarios: Scenario[],
  samples: Map<string, Array<Rounded<Sample>>>,
  known: Row[] = [],
): Row[] {
  const rows = scenarios.map((s) => summarizeRow(s, samples.get(s.name)!));
  const byName = new Map([...known, ...rows].map((r) => [r.name, r]));
  for (const row of rows) {
    const base = row.baseline === null ? undefined : byName.get(row.baseline);
    if (row.kind === 'memory') {
      row.ratio =
        base?.kind === 'memory' ? ratio(row.median.bytesPerStream, base.median.bytesPerStream) : null;
    } else if (row.kind === 'footprint') {
      row.ratio =
        base?.kind === 'footprint'
          ? {
              rss: ratio(row.median.rssGrowth, base.median.rssGrowth),
              heap: ratio(row.median.heapGrowth, base.median.heapGrowth),
            }
          : null;
      if (row.target !== undefined)
        row.target.met = row.ratio === null ? null : row.ratio.rss <= row.target.maxRatio;
    } else if (row.kind === 'latency') {
      rateLatency(row, base?.kind === 'latency' ? base : undefined);
    } else {
      rateThroughput(row, base, byName);
    }
  }
  return rows;
}
