// Invariant bookkeeping of a section: how often each invariant was checked and the first failures it recorded.

export interface InvariantRecord {
  name: string;
  description?: string;
  checks: number;
  failures: string[];
  /** Failures beyond the 50 kept. */
  truncated?: number;
}

/** Invariant names and what each one means, in report order. */
export type InvariantTable = Readonly<Record<string, string>>;

export class Invariants {
  readonly list = new Map<string, InvariantRecord>();

  /** Defines every invariant of a table (so that the report lists them even if never checked). */
  static of(table: InvariantTable): Invariants {
    const inv = new Invariants();
    for (const [name, description] of Object.entries(table)) inv.define(name, description);
    return inv;
  }

  define(name: string, description?: string): InvariantRecord {
    let record = this.list.get(name);
    if (record === undefined) {
      record = { name, description, checks: 0, failures: [] };
      this.list.set(name, record);
    }
    return record;
  }

  ok(name: string, n = 1): void {
    this.define(name).checks += n;
  }

  fail(name: string, message: string): void {
    const inv = this.define(name);
    inv.checks += 1;
    if (inv.failures.length < 50) inv.failures.push(message);
    else inv.truncated = (inv.truncated ?? 0) + 1;
  }

  /** Counts a check that passed when `cond` holds, else records `message()`. */
  expect(name: string, cond: boolean, message: string | (() => string)): boolean {
    if (cond) this.ok(name);
    else this.fail(name, typeof message === 'function' ? message() : message);
    return cond;
  }

  toJSON(): InvariantRecord[] {
    return [...this.list.values()];
  }
}
