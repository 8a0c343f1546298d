// The run's sections, one after another: each measured within its time bound, its rows (or the failure of each row
// it could not measure) recorded, and `onSection` told after each one, so that the results are written as they grow
// and a run that stops late keeps what it measured.
import { errorText } from './harness/failures.js';
import type { FailedRow, Row, SectionReport } from './types-rows.js';
import type { Section } from './types.js';

/** What measuring a section gave: its rows, and the rows that failed. */
export interface SectionOutcome {
  rows: Row[];
  failed: FailedRow[];
}

/** A section to run, or one whose rows are all left out (`skipped`: why). */
export type PlannedSection = Section & { skipped?: string };

/** The run so far: every section's state (`not run` until its turn), the rows measured and the rows that failed. */
export interface RunProgress {
  sections: SectionReport[];
  rows: Row[];
  failed: FailedRow[];
}

export interface SectionRunner {
  /** Measures a section; `known` are the rows measured so far, `signal` aborts it when its time is up. */
  measure(section: Section, known: Row[], signal: AbortSignal): Promise<SectionOutcome>;
  /** How long a section may take before it fails. */
  boundMs(section: Section): number;
  /** Called after each section (skipped ones too), with the run so far and that section's report. */
  onSection(progress: RunProgress, section: SectionReport): void;
}

/** Rows with non-2xx responses or socket errors: measured, but the run is not clean. */
export const rowsWithErrors = (rows: Row[]): Row[] => rows.filter((r) => r.non2xx > 0 || r.errors > 0);

/** The section measured, or failed as a whole (every row of it that was not measured) when it throws or overruns. */
async function outcomeOf(section: Section, runner: SectionRunner, known: Row[]): Promise<SectionOutcome> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const boundMs = runner.boundMs(section);
  const overrun = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`the section took longer than its time bound (${Math.round(boundMs / 1000)} s)`));
    }, boundMs);
  });
  const measuring = runner.measure(section, known, controller.signal);
  measuring.catch(() => undefined); // after an overrun, its late failure has nobody to tell
  try {
    return await Promise.race([measuring, overrun]);
  } catch (err) {
    const error = errorText(err);
    const failed = section.rows.map((s) => ({ name: s.name, section: section.id, stage: 'section', error }));
    return { rows: [], failed };
  } finally {
    clearTimeout(timer);
  }
}

function reportOf(section: Section, outcome: SectionOutcome, seconds: number): SectionReport {
  const withErrors = rowsWithErrors(outcome.rows).length;
  return {
    id: section.id,
    title: section.title,
    status: outcome.failed.length + withErrors === 0 ? 'done' : 'failed',
    measured: outcome.rows.length,
    failed: outcome.failed.length,
    withErrors,
    seconds: Math.round(seconds * 10) / 10,
  };
}

export async function runSections(sections: PlannedSection[], runner: SectionRunner): Promise<RunProgress> {
  const progress: RunProgress = {
    sections: sections.map(({ id, title, skipped }) => ({
      id,
      title,
      status: skipped === undefined ? 'not run' : 'skipped',
      measured: 0,
      failed: 0,
      withErrors: 0,
      ...(skipped === undefined ? {} : { skipped }),
    })),
    rows: [],
    failed: [],
  };
  for (const [i, section] of sections.entries()) {
    if (section.skipped === undefined) {
      const started = performance.now();
      const outcome = await outcomeOf(section, runner, progress.rows);
      progress.rows.push(...outcome.rows);
      progress.failed.push(...outcome.failed);
      progress.sections[i] = reportOf(section, outcome, (performance.now() - started) / 1000);
    }
    runner.onSection(progress, progress.sections[i]!);
  }
  return progress;
}
