// The rows of a section that failed, where and why: each is logged, left out of the rest of the section and
// reported; the other rows go on.
import { log } from '../format.js';
import type { FailedRow } from '../types-rows.js';

/** Errors can carry a server's stderr: the report keeps this much of one. */
const MAX_ERROR_CHARS = 4_000;

/** An error as the report keeps it: its message (the stack adds nothing a reader of the report can use). */
export const errorText = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_CHARS);

export class RowFailures {
  private readonly failed = new Map<string, FailedRow>();

  constructor(private readonly section: string) {}

  /** Records the row's failure at `stage` (only its first: a failed row does not run again). */
  add(name: string, stage: string, err: unknown): void {
    if (this.failed.has(name)) return;
    const error = errorText(err);
    this.failed.set(name, { name, section: this.section, stage, error });
    log(`FAILED ${name} (${stage}): ${error}`);
  }

  has(name: string): boolean {
    return this.failed.has(name);
  }

  list(): FailedRow[] {
    return [...this.failed.values()];
  }
}
