// PostgreSQL schemas of the releases before concurrency limits (migration 19), slots held until a task ends (22),
// priorities (23), operators' pauses (24), rate limits (25), debounce keys (26), slots of steps and calls within
// their request (27), child tasks (28), events from outside a task (29), streams of partial results (30) and trace
// contexts (31): each migrates, its tasks resume, and the feature holds for the tasks created after.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../tasks/store.js';
import { expectHoldAfterUpgrade } from '../contract/concurrency-hold.contract.js';
import { expectRateAfterUpgrade } from '../contract/rate-limits.contract.js';
import { expectDebounceAfterUpgrade } from '../contract/debounce.contract.js';
import { expectHolderSlotsAfterUpgrade } from '../contract/concurrency-holders.contract.js';
import { expectTraceAfterUpgrade } from '../contract/trace-context.contract.js';
import { expectStreamsAfterUpgrade } from '../contract/streams.contract.js';
import { expectChildrenAfterUpgrade } from '../contract/children.contract.js';
import { expectEventsAfterUpgrade } from '../contract/outside-events.contract.js';
import {
  expectLimitHeldAfterUpgrade,
  expectPausesAfterUpgrade,
  expectPrioritiesAfterUpgrade,
  expectUpgradedTasksResume,
  seedUpgradeTasks,
} from '../task-store.contract.js';
import { migrate } from './migrations.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';

const T0 = 1_700_000_000_000;

interface Release {
  /** What the release lacked. */
  before: string;
  /** What holds for the tasks created after the upgrade. */
  after: string;
  version: number;
  /** Takes a schema of today (`s`, quoted) back to that release's. */
  takeBack: (s: string) => string;
  expectAfter: (store: TaskStore, now: number) => Promise<void>;
}

const RELEASES: Release[] = [
  {
    before: 'concurrency limits',
    after: 'tasks created after are held to their limit',
    version: 19,
    takeBack: (s) => `
      DROP TABLE ${s}.concurrency_slots; DROP INDEX ${s}.tasks_parked; DROP INDEX ${s}.tasks_parked_owner;
      ALTER TABLE ${s}.tasks DROP COLUMN concurrency_key, DROP COLUMN concurrency_limit, DROP COLUMN parked_at;
      DELETE FROM ${s}.schema_migrations WHERE version = 19`,
    expectAfter: expectLimitHeldAfterUpgrade,
  },
  {
    before: 'slots held until a task ends',
    after: 'a task created after holds its slot while it sleeps',
    version: 22,
    takeBack: (s) => `
      ALTER TABLE ${s}.tasks DROP COLUMN concurrency_hold; DELETE FROM ${s}.schema_migrations WHERE version = 22`,
    expectAfter: expectHoldAfterUpgrade,
  },
  {
    before: 'priorities',
    after: 'priorities order the tasks created after',
    version: 23,
    takeBack: (s) => `
      DROP INDEX ${s}.tasks_owner_priority; ALTER TABLE ${s}.tasks DROP COLUMN priority;
      DELETE FROM ${s}.schema_migrations WHERE version = 23`,
    expectAfter: expectPrioritiesAfterUpgrade,
  },
  {
    before: 'rate limits',
    after: 'the first runs of a key created after are spaced by its rate',
    version: 25,
    takeBack: (s) => `
      DROP TABLE ${s}.rate_limits; DROP INDEX ${s}.tasks_rate_waits;
      ALTER TABLE ${s}.tasks DROP COLUMN rate_key, DROP COLUMN rate_limit, DROP COLUMN rate_period_ms,
        DROP COLUMN rate_reserved_at;
      DELETE FROM ${s}.schema_migrations WHERE version = 25`,
    expectAfter: expectRateAfterUpgrade,
  },
  {
    before: 'debounce keys',
    after: 'calls within a window make one task of the tasks created after',
    version: 26,
    takeBack: (s) => `
      DROP INDEX ${s}.tasks_debounce; ALTER TABLE ${s}.tasks DROP COLUMN debounce_key;
      DELETE FROM ${s}.schema_migrations WHERE version = 26`,
    expectAfter: expectDebounceAfterUpgrade,
  },
  {
    before: 'operators’ pauses',
    after: 'a paused tool’s tasks created after wait until it is resumed',
    version: 24,
    takeBack: (s) => `
      DROP TABLE ${s}.task_pauses; ALTER TABLE ${s}.tasks DROP COLUMN paused_at;
      DELETE FROM ${s}.schema_migrations WHERE version = 24`,
    expectAfter: expectPausesAfterUpgrade,
  },
  {
    before: 'slots of steps and calls within their request',
    after: 'a call holding a slot counts against the tasks of its key',
    version: 27,
    takeBack: (s) => `DROP TABLE ${s}.slot_holders; DELETE FROM ${s}.schema_migrations WHERE version = 27`,
    expectAfter: expectHolderSlotsAfterUpgrade,
  },
  {
    before: 'events from outside a task',
    after: 'a task created after waits for an event, which wakes it',
    version: 29,
    takeBack: (s) => `DROP TABLE ${s}.outside_events; DELETE FROM ${s}.schema_migrations WHERE version = 29`,
    expectAfter: expectEventsAfterUpgrade,
  },
  {
    before: 'child tasks',
    after: 'a child created after ends its parent’s wait at once',
    version: 28,
    takeBack: (s) => `
      DROP INDEX ${s}.tasks_parent;
      ALTER TABLE ${s}.tasks DROP COLUMN parent_id, DROP COLUMN detached, DROP COLUMN child_ended;
      DELETE FROM ${s}.schema_migrations WHERE version = 28`,
    expectAfter: expectChildrenAfterUpgrade,
  },
  {
    before: 'streams of partial results',
    after: 'a task created after appends to its streams and they read back',
    version: 30,
    takeBack: (s) =>
      `DROP TABLE ${s}.task_stream_chunks; DELETE FROM ${s}.schema_migrations WHERE version = 30`,
    expectAfter: expectStreamsAfterUpgrade,
  },
  {
    before: 'trace contexts',
    after: 'the tasks created after keep their trace context for their runs',
    version: 31,
    takeBack: (s) => `
      ALTER TABLE ${s}.tasks DROP COLUMN trace_parent, DROP COLUMN trace_state;
      DELETE FROM ${s}.schema_migrations WHERE version = 31`,
    expectAfter: expectTraceAfterUpgrade,
  },
];

await withPostgres('the PostgreSQL feature upgrade tests', () => {
  const { admin, open, freshSchema } = usePostgresStores('dmcp_upgrades');

  describe.each(RELEASES)(
    'PostgreSQL schemas of the release before $before',
    ({ after, version, takeBack, expectAfter }) => {
      it(`migrate, their tasks resume, and ${after}`, async () => {
        const schema = freshSchema();
        const before = open({ schema });
        const seeded = await seedUpgradeTasks(before, T0);
        await admin.query(takeBack(pg.escapeIdentifier(schema)));

        expect(await migrate(admin, schema)).toEqual([version]);
        const upgraded = open({ schema });
        await expectUpgradedTasksResume(upgraded, seeded, T0);
        await expectAfter(upgraded, T0 + 10_000);
      });
    },
  );
});
