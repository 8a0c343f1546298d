// The tests docs/lesson.md names, each written `[label](../path) › "test title"`, with the section (the ## or ###
// heading) it sits in. Plain JavaScript, shared by test/lesson-links.test.ts (before the suite) and scripts/check-lesson.mjs
// (after it, on the suite's results).

const REFERENCE = /\[[^\]]*\]\(\.\.\/([^)\s]+)\) › "([^"]+)"/g;

/** Every test reference of the page, in order: { section, file (from the repository root), title }. */
export function lessonRefs(markdown) {
  const refs = [];
  // Sections start at "## " or "### "; text before the first one belongs to the page's introduction.
  for (const part of markdown.split(/^#{2,3} /m)) {
    const section = part.slice(0, part.indexOf('\n')).trim();
    // A title may wrap across lines: whitespace runs count as one space.
    const text = part.replace(/\s+/g, ' ');
    for (const m of text.matchAll(REFERENCE)) refs.push({ section, file: m[1], title: m[2] });
  }
  return refs;
}

/** Whether a test named `name` is the one `title` means; a %s (or %d, %i, %j, %o, %#) of it.each stands for any text. */
export function titleMatches(title, name) {
  const pattern = title
    .split(/%[sdijo#]/)
    .map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.+');
  return new RegExp(`^${pattern}$`).test(name);
}

/** A contract file holds tests that run from another file, once per store: its results are found by title. */
export const isContract = (file) => file.endsWith('.contract.ts');
