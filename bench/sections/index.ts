// Every row of the benchmark, in the order they are measured in every round (and printed). To add one, add it to
// its section and here; bench/README.md ("Adding a scenario") describes the fields.
import type { Scenario } from '../types.js';
import { keyedPgRows, keyedSqliteRows } from './idempotency.js';
import { memoryRows } from './memory.js';
import { operatorRows, pgOperatorRows } from './operator.js';
import { pgCreationRows, pgReplicaRows } from './postgres.js';
import { pgPushRows, pushRows } from './push.js';
import { scaleRows } from './scale.js';
import { sleepingRows } from './sleeping.js';
import { statelessRows } from './stateless.js';
import { creationRow, parkedRow, rawInsertRow, readRows } from './tasks-sqlite.js';
import { waitingRows } from './waiting.js';

export const SCENARIOS: Scenario[] = [
  ...statelessRows,
  rawInsertRow,
  creationRow,
  ...keyedSqliteRows,
  parkedRow,
  ...waitingRows,
  ...readRows,
  // The latency table.
  ...pushRows,
  ...scaleRows,
  ...operatorRows,
  // The memory tables.
  ...memoryRows,
  ...sleepingRows,
  // PostgreSQL: each server (set) on its own fresh schema, dropped at the end.
  ...pgCreationRows,
  ...keyedPgRows,
  ...pgReplicaRows,
  ...pgPushRows,
  ...pgOperatorRows,
];

/**
 * The rows to run: all, or those `only` matches together with the rows they are compared with (baseline,
 * `also`, targets), and theirs in turn; undefined when `only` matches none.
 */
export function selectScenarios(only: RegExp | undefined): Scenario[] | undefined {
  if (only === undefined) return SCENARIOS;
  const wanted = new Set(SCENARIOS.filter((s) => only.test(s.name)).map((s) => s.name));
  if (wanted.size === 0) return undefined;
  const compared = (s: Scenario) => [
    ...(s.baseline === null ? [] : [s.baseline]),
    ...(s.kind === undefined ? [...(s.also ?? []), ...(s.targets ?? []).map((t) => t.vs)] : []),
  ];
  for (let pass = 0; pass < SCENARIOS.length; pass++) {
    const before = wanted.size;
    for (const s of SCENARIOS) if (wanted.has(s.name)) compared(s).forEach((name) => wanted.add(name));
    if (wanted.size === before) break;
  }
  return SCENARIOS.filter((s) => wanted.has(s.name));
}
