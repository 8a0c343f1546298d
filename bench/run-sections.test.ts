// The run's sections: a section that throws or overruns is reported, with its error, and the run goes on; the
// results written after each section keep what was measured and mark the sections not run yet.
import { describe, expect, it } from 'vitest';
import { parseParams } from './options.js';
import { buildReport, machineInfo, markdown } from './report.js';
import { runSections, type PlannedSection, type RunProgress, type SectionOutcome } from './run-sections.js';
import { summarize } from './summarize.js';
import type { Row, SectionReport } from './types-rows.js';
import type { RawScenario, Rounded, Sample, Section } from './types.js';

const rawRow = (name: string, baseline: string | null): RawScenario => ({
  name,
  server: 'sqlite',
  baseline,
  run: () => Promise.reject(new Error('not run in this test')),
});

const sample = (rps: number): Rounded<Sample> => ({
  round: 1,
  rps,
  p50: 1,
  p99: 2,
  ok: rps,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  seconds: 1,
});

/** Measures a section as if every row ran one round at 100 ops/s × its position. */
function fakeOutcome(section: Section, known: Row[]): SectionOutcome {
  const samples = new Map(section.rows.map((s, i) => [s.name, [sample(100 * (i + 1))]]));
  return { rows: summarize(section.rows, samples, known), failed: [] };
}

const SECTIONS: PlannedSection[] = [
  { id: 'first', title: 'First', rows: [rawRow('base row', null)] },
  {
    id: 'broken',
    title: 'Broken',
    rows: [rawRow('broken row | with `marks`', null), rawRow('broken too', 'base row')],
  },
  { id: 'third', title: 'Third', rows: [rawRow('third base', null), rawRow('third row', 'base row')] },
  { id: 'left-out', title: 'Left out', rows: [rawRow('pg row', null)], skipped: 'no PostgreSQL here' },
];

/** The Markdown main writes after a section, from the run so far. */
function markdownOf(progress: RunProgress): string {
  const report = buildReport({
    params: parseParams([]),
    machine: machineInfo(),
    progress,
    postgres: { skipped: 'not in this test' },
    stores: { scale: undefined, pgScale: undefined, sleepers: undefined },
  });
  return markdown(report);
}

describe('bench sections', () => {
  it('reports a section that throws, with its error on each of its rows, and runs the sections after it', async () => {
    const written: string[] = [];
    const lines: SectionReport[] = [];
    const progress = await runSections(SECTIONS, {
      measure: async (section, known) => {
        if (section.id === 'broken') throw new Error('pre-flight exploded | badly\nsecond line');
        return fakeOutcome(section, known);
      },
      boundMs: () => 10_000,
      onSection: (p, section) => {
        lines.push(structuredClone(section));
        written.push(markdownOf(p));
      },
    });

    expect(progress.sections.map((s) => [s.id, s.status])).toEqual([
      ['first', 'done'],
      ['broken', 'failed'],
      ['third', 'done'],
      ['left-out', 'skipped'],
    ]);
    expect(progress.failed).toEqual([
      expect.objectContaining({ name: 'broken row | with `marks`', section: 'broken', stage: 'section' }),
      expect.objectContaining({ name: 'broken too', section: 'broken', stage: 'section' }),
    ]);
    expect(progress.failed[0]!.error).toBe('pre-flight exploded | badly\nsecond line');
    // The section after the failure was measured, and compared with a row of the first section.
    const third = progress.rows.find((r) => r.name === 'third row')!;
    expect(third.kind === undefined && third.ratio).toBe(2);
    expect(lines.map((s) => s.id)).toEqual(['first', 'broken', 'third', 'left-out']);

    const final = written.at(-1)!;
    expect(final).toContain('**Run completed with failures**: 1 section failed.');
    expect(final).toMatch(/\| Broken \(`broken`\) \| \*\*FAILED\*\*: 2 rows failed \| 0 \|/);
    expect(final).toContain(
      "- **FAILED** `broken row | with 'marks'` (section broken, section): pre-flight exploded \\| badly second line",
    );
    expect(final).toContain('| Left out (`left-out`) | skipped: no PostgreSQL here |');
    expect(final).toMatch(/\| third row \| 200 \|/);
  });

  it('writes after every section what it has, marking the sections not run yet', async () => {
    const written: string[] = [];
    await runSections(SECTIONS.slice(0, 3), {
      measure: async (section, known) => {
        if (section.id === 'broken') throw new Error('boom');
        return fakeOutcome(section, known);
      },
      boundMs: () => 10_000,
      onSection: (p) => written.push(markdownOf(p)),
    });
    // What a run that died during the third section leaves behind.
    const afterSecond = written[1]!;
    expect(afterSecond).toContain('**Run incomplete**: 1 section not run, 2 rows failed.');
    expect(afterSecond).toContain('| Third (`third`) | **not run** (the run stopped before it) | 0 | – |');
    expect(afterSecond).toMatch(/\| base row \| 100 \|/);
    expect(afterSecond).not.toContain('third row');
  });

  it('fails a section that overruns its time bound, aborting it, and goes on', async () => {
    let aborted = false;
    const progress = await runSections(SECTIONS.slice(0, 3), {
      measure: (section, known, signal) => {
        if (section.id !== 'broken') return Promise.resolve(fakeOutcome(section, known));
        signal.addEventListener('abort', () => (aborted = true));
        return new Promise<never>(() => undefined); // hangs
      },
      boundMs: (section) => (section.id === 'broken' ? 50 : 10_000),
      onSection: () => undefined,
    });
    expect(aborted).toBe(true);
    expect(progress.failed.map((f) => f.error)).toEqual([
      'the section took longer than its time bound (0 s)',
      'the section took longer than its time bound (0 s)',
    ]);
    expect(progress.sections.map((s) => s.status)).toEqual(['done', 'failed', 'done']);
  });
});
