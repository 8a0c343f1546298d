// The two memory tables of latest.md: bytes per open stream, and server memory with sleeping tasks.
import { MEM_STREAMS, MEM_TASKS, SLEEP_COUNTS, type StoreSize } from '../config.js';
import { fmtInt, fmtMiB } from '../format.js';
import type { FootprintRow, MemoryRow } from '../types-rows.js';
import type { SleepFill } from '../types.js';
import { fmtRatio } from './throughput.js';

export function memoryTable(rows: MemoryRow[]): string[] {
  return [
    `### Memory per open stream (${fmtInt(MEM_STREAMS)} streams at once)`,
    '',
    '| row | bytes/stream median | min–max over rounds | V8 heap | external | RSS | ratio vs baseline |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${[
          r.name,
          fmtInt(r.median.bytesPerStream),
          `${fmtInt(r.min.bytesPerStream)}–${fmtInt(r.max.bytesPerStream)}`,
          fmtInt(r.median.heapPerStream),
          fmtInt(r.median.externalPerStream),
          fmtInt(r.median.rssPerStream),
          fmtRatio(r),
        ].join(' | ')} |`,
    ),
    '',
    `bytes/stream: growth of the server's V8 heap used + external memory, both after a full GC, with ` +
      `${fmtInt(MEM_STREAMS)} subscriptions/listen streams open (each on its own connection, each watching the ` +
      `same ${MEM_TASKS} input_required tasks and having shown all of them), ÷ ${fmtInt(MEM_STREAMS)}; median ` +
      'over rounds, as are the V8 heap and external parts. RSS: growth of the resident set over the same ' +
      "interval ÷ streams (it also counts the garbage collector's headroom and native buffers, and is noisier). " +
      'The baseline is a bare node:http server holding each request open as an SSE stream with one event per task.',
  ];
}

const fmtFootprintRatios = (r: FootprintRow) =>
  r.ratio == null
    ? '1.00 / 1.00 (baseline)'
    : `${r.ratio.rss.toFixed(2)} / ${r.ratio.heap.toFixed(2)} × ${r.baseline}`;

const fmtFootprintTarget = (r: FootprintRow) =>
  r.target === undefined
    ? '–'
    : `${r.target.text}: ${r.ratio == null ? '–' : r.ratio.rss.toFixed(2)} × → **${r.target.met ? 'met' : 'not met'}**`;

const FOOTPRINT_NOTE =
  'Growth: what the server process added since it started, read by the memory probe after a full GC (its reading ' +
  'after the round minus its reading when it was preloaded, before any of the server’s own modules): the ' +
  'resident set (RSS), and V8 heap used + external memory. Medians over rounds; each reading follows the ' +
  'wake-up lateness rows of its round, so both servers have served the same requests and woken the same ' +
  'sample tasks. Sleeping tasks: working tasks with a wake-up time in the store when the probe ran. The ' +
  'stores were cloned from one task our server put to sleep (its row and its step row, bench/children/scale-tasks.ts)';

export function footprintTable(rows: FootprintRow[], sleepers: SleepFill | undefined): string[] {
  const fills = Object.entries(sleepers ?? {})
    .filter(([size]) => SLEEP_COUNTS[size as StoreSize] !== undefined)
    .map(([, f]) => f as { count: number; ms: number })
    .map((f) => `${fmtInt(f.count)} in ${(f.ms / 1000).toFixed(1)} s`);
  return [
    '### Server memory with sleeping tasks',
    '',
    '| row | sleeping tasks | RSS growth MiB median | min–max over rounds | V8 heap + external growth MiB | RSS MiB | ratio RSS / heap growth vs baseline | target |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows.map(
      (r) =>
        `| ${[
          r.name,
          fmtInt(r.sleeping),
          fmtMiB(r.median.rssGrowth),
          `${fmtMiB(r.min.rssGrowth)}–${fmtMiB(r.max.rssGrowth)}`,
          fmtMiB(r.median.heapGrowth),
          fmtMiB(r.median.rss),
          fmtFootprintRatios(r),
          fmtFootprintTarget(r),
        ].join(' | ')} |`,
    ),
    '',
    FOOTPRINT_NOTE + (fills.length === 0 ? '.' : `: ${fills.join(', ')}.`),
  ];
}
