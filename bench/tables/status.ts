// The run's status in latest.md: whether it completed, each section's state, and every failed row with its error.
import { printable } from '../format.js';
import type { Report } from '../report-types.js';
import type { FailedRow, SectionReport } from '../types-rows.js';

/** An error in one table cell or list item: one line, at most 400 characters, no Markdown or HTML of its own. */
export function cellText(text: string): string {
  const line = printable(text).replace(/\s+/g, ' ').trim();
  const short = line.length > 400 ? `${line.slice(0, 399)}…` : line;
  return short.replace(/[\\`*_[\]<>|]/g, (c) => `\\${c}`);
}

function sectionState(s: SectionReport): string {
  switch (s.status) {
    case 'done':
      return 'done';
    case 'skipped':
      return `skipped: ${cellText(s.skipped ?? '')}`;
    case 'not run':
      return '**not run** (the run stopped before it)';
    default: {
      const parts = [
        ...(s.failed > 0 ? [`${s.failed} row${s.failed === 1 ? '' : 's'} failed`] : []),
        ...(s.withErrors > 0 ? [`${s.withErrors} with non-2xx responses or errors`] : []),
      ];
      return `**FAILED**: ${parts.join(', ')}`;
    }
  }
}

const failedLine = (f: FailedRow) =>
  `- **FAILED** \`${f.name.replace(/`/g, "'")}\` (section ${f.section}, ${f.stage}): ${cellText(f.error)}`;

/** One line on the run as a whole. */
function verdict(report: Report): string {
  const notRun = report.sections.filter((s) => s.status === 'not run').length;
  const failed = report.sections.filter((s) => s.status === 'failed').length;
  if (notRun > 0) {
    return `**Run incomplete**: ${notRun} section${notRun === 1 ? '' : 's'} not run, ${report.failed.length} rows failed.`;
  }
  if (failed > 0)
    return `**Run completed with failures**: ${failed} section${failed === 1 ? '' : 's'} failed.`;
  return 'Run completed: every section ran and no row failed.';
}

export function statusLines(report: Report): string[] {
  const lines = [
    verdict(report),
    '',
    '| section | state | rows measured | seconds |',
    '| --- | --- | ---: | ---: |',
    ...report.sections.map(
      (s) => `| ${s.title} (\`${s.id}\`) | ${sectionState(s)} | ${s.measured} | ${s.seconds ?? '–'} |`,
    ),
  ];
  if (report.failed.length > 0) lines.push('', ...report.failed.map(failedLine));
  return lines;
}

/**
 * A section's line when it is over: `ok   <id> …`, `FAIL <id> …` or `skip <id> …` (as the reliability suite prints
 * its sections, and `npm test` counts them), then one line per row of it that failed.
 */
export function sectionLine(section: SectionReport, failed: FailedRow[]): string {
  const status = { done: 'ok  ', failed: 'FAIL', skipped: 'skip', 'not run': 'FAIL' }[section.status];
  const what =
    section.status === 'skipped'
      ? (section.skipped ?? '')
      : `${section.measured} rows measured, ${section.failed} failed, ${section.withErrors} with errors` +
        ` (${section.seconds ?? '–'} s)`;
  const rows = failed
    .filter((f) => f.section === section.id)
    .map((f) => `\n     ✗ ${f.name} (${f.stage}): ${printable(f.error.split('\n')[0] ?? '').slice(0, 400)}`);
  return `${status} ${section.id.padEnd(10)} ${what}${rows.join('')}`;
}
