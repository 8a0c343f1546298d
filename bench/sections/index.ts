// Every row of the benchmark, in sections measured one after another; within a section, in the order they are
// measured in every round (and printed). To add one, add it to its section file and here; bench/README.md ("Adding a
// scenario") describes the fields.
import type { Scenario, Section } from '../types.js';
import { childRows } from './children.js';
import { eventsRow } from './events.js';
import { gatewayRows } from './gateway.js';
import { keyedPgRows, keyedSqliteRows } from './idempotency.js';
import { memoryRows } from './memory.js';
import { operatorRows, pgOperatorRows } from './operator.js';
import { pgCreationRows, pgReplicaRows } from './postgres.js';
import { pgPushRows, pushRows } from './push.js';
import { saturatedRow } from './saturated.js';
import { scaleRows } from './scale.js';
import { sleepingRows } from './sleeping.js';
import { statelessRows } from './stateless.js';
import { creationRow, parkedRow, rawInsertRow, readRows } from './tasks-sqlite.js';
import { waitingRows } from './waiting.js';

export const SECTIONS: Section[] = [
  {
    id: 'throughput',
    title: 'Throughput: HTTP and SQLite',
    rows: [
      ...statelessRows,
      rawInsertRow,
      creationRow,
      ...keyedSqliteRows,
      parkedRow,
      ...waitingRows,
      saturatedRow,
      eventsRow,
      ...readRows,
    ],
  },
  { id: 'push', title: 'Latency: tasks/get and push', rows: pushRows },
  { id: 'children', title: 'Child tasks: a child’s round trip next to a step’s', rows: childRows },
  {
    id: 'stored',
    title: 'Stored tasks: tasks/get and the operator list',
    rows: [...scaleRows, ...operatorRows],
  },
  { id: 'memory', title: 'Memory per open stream', rows: memoryRows },
  { id: 'sleeping', title: 'Sleeping tasks: wake-ups and server memory', rows: sleepingRows },
  // PostgreSQL: each server (set) on its own fresh schema, dropped at the end.
  {
    id: 'pg',
    title: 'PostgreSQL: creation, tasks/get and push',
    rows: [...pgCreationRows, ...keyedPgRows, ...pgReplicaRows, ...pgPushRows],
  },
  { id: 'pg-stored', title: 'PostgreSQL stored tasks: the operator list', rows: pgOperatorRows },
  {
    id: 'gateway',
    title: 'Gateway: an SDK v1 upstream called directly and through durable-mcp gateway',
    rows: gatewayRows,
  },
];

export const SCENARIOS: Scenario[] = SECTIONS.flatMap((s) => s.rows);

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

/** The sections with only the `rows` among their rows (by name), in order; sections left with none are dropped. */
export function sectionsOf(rows: Scenario[], sections: Section[] = SECTIONS): Section[] {
  const names = new Set(rows.map((r) => r.name));
  return sections
    .map((section) => ({ ...section, rows: section.rows.filter((r) => names.has(r.name)) }))
    .filter((section) => section.rows.length > 0);
}
