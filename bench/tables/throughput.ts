// The throughput table of latest.md and its notes.
import { HOST, PG_CONNECTIONS, PG_REPLICAS } from '../config.js';
import { fmtInt } from '../format.js';
import type { TargetResult, ThroughputRow } from '../types-rows.js';
import type { Report } from '../report-types.js';

export function fmtRatio(r: { baseline: string | null; ratio?: number | null | undefined }): string {
  if (r.baseline === null) return '1.00 (baseline)';
  return `${Number(r.ratio).toFixed(2)} × ${r.baseline}`;
}

function fmtAlso(r: ThroughputRow): string {
  if (r.also === undefined) return '–';
  return r.also
    .map((a) => (a.ratio === null ? `– × ${a.name}` : `${a.ratio.toFixed(2)} × ${a.name}`))
    .join('; ');
}

/** A target as the table shows it; a CPU target with its ratio, which no other column shows. */
function fmtTarget(t: TargetResult): string {
  const verdict = t.met === null ? 'not measured' : `**${t.met ? 'met' : 'not met'}**`;
  if (t.maxCpu === undefined) return `≥ ${t.min} × ${t.vs}: ${verdict}`;
  const measured = t.ratio === null ? '' : ` (${t.ratio.toFixed(2)} ×)`;
  return `CPU µs/op ≤ ${t.maxCpu} × ${t.vs}'s: ${verdict}${measured}`;
}

function fmtTargets(r: ThroughputRow): string {
  return r.targets === undefined ? '–' : r.targets.map(fmtTarget).join('; ');
}

function tableRow(r: ThroughputRow): string {
  const range = `${fmtInt(r.min.rps)}–${fmtInt(r.max.rps)}`;
  const cells = [
    r.name,
    fmtInt(r.median.rps),
    range,
    r.median.p50,
    r.median.p99,
    r.median.cpuUs === null ? '–' : r.median.cpuUs.toFixed(1),
    r.non2xx,
    r.errors,
    fmtRatio(r),
    fmtAlso(r),
    fmtTargets(r),
  ];
  return `| ${cells.join(' | ')} |`;
}

/**
 * For a SQLite row with a target against another row (keys, retrying tasks): the bytes its server wrote to disk per
 * created task next to that row's, which tells disk work (what fsync-bound creation pays for) from CPU.
 */
function writtenNote(r: ThroughputRow, rows: ThroughputRow[]): string | undefined {
  const vs = rows.find((x) => x.name === r.targets?.[0]?.vs);
  const kb = r.median.writtenKb;
  const vsKb = vs?.median.writtenKb;
  if (kb == null || vs === undefined || vsKb == null || kb < 0.1) return undefined;
  return (
    `${r.name}: the server wrote ${kb.toFixed(1)} KB to disk per created task (median over ` +
    `rounds, the worker's writes included), against ${vsKb.toFixed(1)} KB in ${vs.name}.`
  );
}

/** For a pg row: the writing transactions PostgreSQL committed per operation (harness/pg-xacts.ts). */
function xactsNote(r: ThroughputRow): string | undefined {
  const x = r.median.xactsPerOp;
  if (x == null) return undefined;
  const per = x > 0 ? ` (one per ${(1 / x).toFixed(1)} operations)` : '';
  const { batchTasks, batchMs } = r.median;
  const batches =
    batchTasks == null || batchMs == null
      ? ''
      : `; the replicas' creation batches: ${batchTasks.toFixed(1)} creations each, ${batchMs.toFixed(2)} ms ` +
        'from leaving to their answer (harness/creation-batches.ts)';
  return `${r.name}: ${x.toFixed(3)} writing commits per operation${per}${batches}, median over rounds.`;
}

const fmtUs = (x: number | null | undefined, what: string) =>
  x == null ? undefined : `${what} ${x.toFixed(1)} µs`;

/** For a pg row: where the machine's CPU went during its runs (harness/cpu-window.ts). */
export function cpuNote(r: ThroughputRow): string | undefined {
  const m = r.median;
  if (m.busyCores === undefined && m.pgCpuUs === undefined) return undefined;
  const perOp = [
    fmtUs(m.cpuUs, 'server'),
    fmtUs(m.pgCpuUs, 'PostgreSQL'),
    m.pgAllCpuUs == null || m.pgAllCpuUs === m.pgCpuUs
      ? undefined
      : `(every postgres process ${m.pgAllCpuUs.toFixed(1)} µs)`,
    fmtUs(m.loadCpuUs, 'load generator'),
    fmtUs(m.kernelUs, 'kernel interrupts'),
  ].filter((x) => x !== undefined);
  const cores =
    m.busyCores == null
      ? 'cores busy: unknown (no /proc/stat)'
      : `cores busy ${m.busyCores.toFixed(2)}, of which other work ${(m.otherCores ?? 0).toFixed(2)}`;
  const costs = perOp.length === 0 ? 'no CPU figures (no /proc)' : `${perOp.join(', ')} per operation`;
  return `${r.name}: ${costs}; ${cores}.`;
}

function drainNote(r: ThroughputRow & Required<Pick<ThroughputRow, 'drain'>>): string {
  return (
    `${r.name}: at the end of a run at most ${fmtInt(r.drain.maxBacklog)} created tasks were still ` +
    `unfinished; the worker finished them within ${r.drain.maxMs} ms, before the next row started.`
  );
}

const THROUGHPUT_NOTE =
  'ops/s: 2xx responses per second for HTTP rows (p50/p99 at 1 ms resolution), statements per second for ' +
  'raw rows (each insert its own committed transaction; p50/p99 per statement). p50/p99 are ' +
  "medians of the per-round percentiles. CPU µs/op: median over rounds of the server process's CPU time " +
  "(user + system) per operation — for the creation row including the worker finishing the run's tasks; " +
  "for raw rows the child's, without fsync waits. ratio = median ops/s ÷ median ops/s of the named " +
  'row from the same run, from the same interleaved rounds when both rows are of one section (the PostgreSQL ' +
  "rows' ratio against the peer is against the peer's row of the throughput section, measured earlier in the " +
  'run). The peer (official TypeScript SDK v2, bench/children/sdk-peer.ts) receives byte-for-byte ' +
  'the same requests as ours and lists the same tools; it has no tasks, so the task rows are compared with ' +
  'its synchronous tools/call echo.';

/** The heading, and the machine and load lines. */
export function headerLines(report: Report): string[] {
  const { machine, parameters: p } = report;
  const runs =
    p.amount === undefined
      ? `${p.duration} s`
      : `${p.amount} requests (rows that are not HTTP load ${p.duration} s)`;
  return [
    `## durable-mcp benchmark — ${machine.date}${p.mode === 'smoke' ? ' (smoke run: nothing measured)' : ''}`,
    '',
    `Machine: ${machine.cpuModel} × ${machine.cores} cores, ${machine.totalMemGiB} GiB, ` +
      `${machine.platform} ${machine.release}, Node ${machine.node}, commit ${machine.commit}, ` +
      `load average at start ${machine.loadavg.join(' / ')}.`,
    `Load: autocannon ${report.loadGenerator.version} in the parent process, ${p.connections} connections, ` +
      `pipelining ${p.pipelining}; per section ${p.rounds} interleaved rounds × ${runs} after a ` +
      `${p.warmup} s warm-up per scenario. Servers in separate child processes on ${HOST}; the raw better-sqlite3 rows ` +
      `run a single-threaded loop in their own child process for the same ${p.duration} s, without load ` +
      `generator, and the raw pg rows ${PG_CONNECTIONS} concurrent loops (one per connection) in theirs.`,
  ];
}

/** The throughput table and its notes. */
export function throughputTable(throughput: ThroughputRow[]): string[] {
  const lines = [
    '| scenario | ops/s median | ops/s min–max | p50 ms | p99 ms | CPU µs/op | non-2xx | errors | ratio vs baseline | ratio vs peer / other | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...throughput.map(tableRow),
    '',
    THROUGHPUT_NOTE,
  ];
  const drained = throughput.filter(
    (r): r is ThroughputRow & Required<Pick<ThroughputRow, 'drain'>> => r.drain !== undefined,
  );
  if (drained.length > 0) lines.push('', ...drained.map((r) => `- ${drainNote(r)}`));
  const written = throughput.map((r) => writtenNote(r, throughput)).filter((line) => line !== undefined);
  if (written.length > 0) lines.push('', ...written.map((line) => `- ${line}`));
  const xacts = throughput.map(xactsNote).filter((line) => line !== undefined);
  if (xacts.length > 0) {
    lines.push(
      '',
      '- Writing commits per operation of the pg rows: transaction ids PostgreSQL assigned over a run ' +
        "(a transaction gets one when it writes; only such a commit waits for its WAL flush) ÷ the run's " +
        'operations. Every writer of the same PostgreSQL counts, so other work on it adds to the figure.',
      ...xacts.map((line) => `- ${line}`),
    );
  }
  const cpu = throughput.map(cpuNote).filter((line) => line !== undefined);
  if (cpu.length > 0) {
    lines.push(
      '',
      '- Where the CPU went during the pg rows (medians over rounds; docs/scaling.md builds its capacity model from ' +
        "these): per operation the server's processes, PostgreSQL's (user + system time of its processes in " +
        "/proc/<pid>/stat: the row's own backends, found by their clients' ports, the background processes and the " +
        "postmaster), the load generator's (the harness process running autocannon; none for raw rows, which bring " +
        "their own) and the kernel's interrupt work (irq + softirq of /proc/stat, in no process's time); then the " +
        'cores busy on average over the run (/proc/stat, steal included) and the part of them other work took ' +
        '(busy minus all of the above). Other work on the cores shrinks what a row can reach by its share.',
      ...cpu.map((line) => `- ${line}`),
    );
  }
  return lines;
}

/** The note on the PostgreSQL rows: where they ran, or why they were skipped. */
export function postgresNote(report: Report): string {
  const pg = report.postgres;
  if (pg.skipped !== undefined) return `- PostgreSQL rows skipped: ${pg.skipped}`;
  return (
    `- PostgreSQL rows: ${pg.url}, a fresh schema per server (set), dropped at the end; our ` +
    'servers run no worker (`--concurrency 0`), so the creation rows are the creation path and the tasks ' +
    `stay \`working\`; ${PG_REPLICAS} replicas = ${PG_REPLICAS} processes on one schema, one autocannon ` +
    'instance each (connections split evenly; p50/p99 the largest of the instances). CPU µs/op: our ' +
    "processes' (all replicas), or the raw child's; PostgreSQL's own CPU is in neither (it is in the note on " +
    'where the CPU went).'
  );
}
