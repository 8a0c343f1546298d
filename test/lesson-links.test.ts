// docs/lesson.md maps the lesson's run, checks and exercises to tests: each of its links leads somewhere, each test
// it names exists and is not skipped, and every step, check and exercise names at least one. (That the named tests
// passed is checked after the suite, from its results: scripts/check-lesson.mjs.)
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isContract, lessonRefs, titleMatches } from '../scripts/lesson-refs.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAGE = join(ROOT, 'docs', 'lesson.md');
const page = readFileSync(PAGE, 'utf8');
const refs = lessonRefs(page);
const sectionsOf = (prefix: string): string[] => [
  ...new Set(refs.filter((r) => r.section.startsWith(prefix)).map((r) => r.section)),
];

/** The test titles a file declares (it/test, each, not skipped or todo), and the ones it skips. */
function declaredTitles(source: string): { live: string[]; skipped: string[] } {
  const live: string[] = [];
  const skipped: string[] = [];
  // `it('…'`, `test("…"`, `it.each(…)('…'` (the table in between may span lines), `it.skip('…'`.
  const call =
    /\b(?:it|test)(\.skip|\.todo|\.only|\.each\([\s\S]*?\)|\.skipIf\([^)]*\)|\.runIf\([^)]*\))?\(\s*(['"`])((?:\\.|(?!\2)[\s\S])*)\2/g;
  for (const m of source.matchAll(call)) {
    const title = (m[3] ?? '').replace(/\\(.)/g, '$1');
    if (m[1] === '.skip' || m[1] === '.todo') skipped.push(title);
    else live.push(title);
  }
  return { live, skipped };
}

describe('docs/lesson.md', () => {
  it('links only to files and folders that exist', () => {
    const targets = [...page.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string);
    expect(targets.length).toBeGreaterThan(20);
    for (const target of targets) {
      if (/^[a-z]+:/.test(target)) continue;
      const path = join(dirname(PAGE), target.replace(/#.*$/, ''));
      expect(existsSync(path), `${target} (from docs/lesson.md)`).toBe(true);
    }
  });

  it('names each test by a title its file declares, and none that is skipped', () => {
    expect(refs.length).toBeGreaterThanOrEqual(25);
    for (const ref of refs) {
      expect(ref.file, ref.title).toMatch(/\.(test|contract)\.ts$/);
      const source = readFileSync(join(ROOT, ref.file), 'utf8');
      const { live, skipped } = declaredTitles(source);
      const where = `${ref.file} › "${ref.title}"`;
      expect(
        live.some((t) => t === ref.title),
        `${where} is not a test title of that file`,
      ).toBe(true);
      expect(skipped.includes(ref.title), `${where} is skipped`).toBe(false);
    }
  });

  it('backs every line of the reference run with a test', () => {
    const run = page.slice(page.indexOf('## The reference run'), page.indexOf('## The checks'));
    expect(run).toContain('id=0 resultType=complete status=ack\nid=1 resultType=task status=working');
    const covered = new Set<number>();
    for (const m of run.matchAll(/^- `id=(\d)`(?: to `id=(\d)`)?:(.*(?:\n {2}.*)*)/gm)) {
      expect(m[3], `the line for id=${m[1]}`).toMatch(/\]\(\.\.\/[^)]+\.test\.ts\) › "/);
      for (let id = Number(m[1]); id <= Number(m[2] ?? m[1]); id++) covered.add(id);
    }
    expect([...covered].sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // And the demo itself, as a whole.
    expect(refs).toContainEqual({
      section: 'The reference run',
      file: 'test/e2e/cli-demo.test.ts',
      title: 'prints the reference sequence exactly, then the checks, then the task after a restart',
    });
  });

  it('backs each of the three checks and each of the five exercises with at least one test', () => {
    const checks = sectionsOf('Check: ');
    expect(checks).toHaveLength(3);
    for (const topic of ['tasks/status', 'tools/list', 'Mcp-Name'])
      expect(
        checks.some((c) => c.includes(topic)),
        topic,
      ).toBe(true);
    const exercises = sectionsOf('Exercise ');
    expect(exercises.map((s) => s.slice(0, 'Exercise 1'.length))).toEqual(
      [1, 2, 3, 4, 5].map((n) => `Exercise ${n}`),
    );
    for (const exercise of exercises) {
      const named = refs.filter((r) => r.section === exercise);
      // Each exercise is proven end to end, not only by a store's contract.
      expect(
        named.some((r) => !isContract(r.file)),
        exercise,
      ).toBe(true);
    }
  });

  it('matches titles of it.each by their placeholders', () => {
    expect(titleMatches('%s → 405 with Allow: POST', 'GET → 405 with Allow: POST')).toBe(true);
    expect(titleMatches('%s → 405 with Allow: POST', '→ 405 with Allow: POST')).toBe(false);
    expect(titleMatches('a (b) c', 'a (b) c')).toBe(true);
    expect(titleMatches('a (b) c', 'a b c')).toBe(false);
  });
});
