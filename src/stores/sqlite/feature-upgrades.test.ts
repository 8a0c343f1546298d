// SQLite files of the releases before concurrency limits (migration 20), slots held until a task ends (22),
// priorities (23), operators' pauses (24), rate limits (25), debounce keys (26), slots of steps and calls within
// their request (27), child tasks (28), events from outside a task (29), streams of partial results (30) and trace
// contexts (31): each opens, its tasks resume, and the feature holds for the tasks created after.
import Database from 'better-sqlite3';
import { describe, it } from 'vitest';
import { sqliteFiles, TAKE_BACK_PAUSES } from '../../../test/support/sqlite-files.js';
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
import type { TaskStore } from '../../tasks/store.js';

const T0 = 1_700_000_000_000;

const { freshPath, open } = sqliteFiles();

interface Release {
  /** What the release lacked. */
  before: string;
  /** What holds for the tasks created after the upgrade. */
  after: string;
  /** Takes a file of today back to that release's schema. */
  takeBack: string;
  expectAfter: (store: TaskStore, now: number) => Promise<void>;
}

const RELEASES: Release[] = [
  {
    before: 'concurrency limits',
    after: 'tasks created after are held to their limit',
    takeBack: `${TAKE_BACK_PAUSES}
      DROP TRIGGER concurrency_slots_task_deleted; DROP TABLE concurrency_slots;
      DROP INDEX tasks_parked; DROP INDEX tasks_parked_owner; ALTER TABLE tasks DROP COLUMN concurrency_key;
      ALTER TABLE tasks DROP COLUMN concurrency_limit; ALTER TABLE tasks DROP COLUMN parked_at;
      DELETE FROM schema_migrations WHERE version = 20`,
    expectAfter: expectLimitHeldAfterUpgrade,
  },
  {
    before: 'slots held until a task ends',
    after: 'a task created after holds its slot while it sleeps',
    takeBack: `ALTER TABLE tasks DROP COLUMN concurrency_hold; DELETE FROM schema_migrations WHERE version = 22`,
    expectAfter: expectHoldAfterUpgrade,
  },
  {
    before: 'priorities',
    after: 'priorities order the tasks created after',
    takeBack: `
      DROP INDEX tasks_owner_priority; ALTER TABLE tasks DROP COLUMN priority;
      DELETE FROM schema_migrations WHERE version = 23`,
    expectAfter: expectPrioritiesAfterUpgrade,
  },
  {
    before: 'rate limits',
    after: 'the first runs of a key created after are spaced by its rate',
    takeBack: `
      DROP INDEX tasks_rate_waits; DROP TABLE rate_limits; ALTER TABLE tasks DROP COLUMN rate_key;
      ALTER TABLE tasks DROP COLUMN rate_limit; ALTER TABLE tasks DROP COLUMN rate_period_ms;
      ALTER TABLE tasks DROP COLUMN rate_reserved_at; DELETE FROM schema_migrations WHERE version = 25`,
    expectAfter: expectRateAfterUpgrade,
  },
  {
    before: 'debounce keys',
    after: 'calls within a window make one task of the tasks created after',
    takeBack: `
      DROP INDEX tasks_debounce; ALTER TABLE tasks DROP COLUMN debounce_key;
      DELETE FROM schema_migrations WHERE version = 26`,
    expectAfter: expectDebounceAfterUpgrade,
  },
  {
    before: 'operators’ pauses',
    after: 'a paused tool’s tasks created after wait until it is resumed',
    takeBack: TAKE_BACK_PAUSES,
    expectAfter: expectPausesAfterUpgrade,
  },
  {
    before: 'slots of steps and calls within their request',
    after: 'a call holding a slot counts against the tasks of its key',
    takeBack: `DROP TABLE slot_holders; DELETE FROM schema_migrations WHERE version = 27`,
    expectAfter: expectHolderSlotsAfterUpgrade,
  },
  {
    before: 'events from outside a task',
    after: 'a task created after waits for an event, which wakes it',
    takeBack: `DROP TABLE outside_events; DELETE FROM schema_migrations WHERE version = 29`,
    expectAfter: expectEventsAfterUpgrade,
  },
  {
    before: 'child tasks',
    after: 'a child created after ends its parent’s wait at once',
    takeBack: `
      DROP INDEX tasks_parent; ALTER TABLE tasks DROP COLUMN parent_id; ALTER TABLE tasks DROP COLUMN detached;
      ALTER TABLE tasks DROP COLUMN child_ended; DELETE FROM schema_migrations WHERE version = 28`,
    expectAfter: expectChildrenAfterUpgrade,
  },
  {
    before: 'streams of partial results',
    after: 'a task created after appends to its streams and they read back',
    takeBack: `DROP TABLE task_stream_chunks; DELETE FROM schema_migrations WHERE version = 30`,
    expectAfter: expectStreamsAfterUpgrade,
  },
  {
    before: 'trace contexts',
    after: 'the tasks created after keep their trace context for their runs',
    takeBack: `
      ALTER TABLE tasks DROP COLUMN trace_parent; ALTER TABLE tasks DROP COLUMN trace_state;
      DELETE FROM schema_migrations WHERE version = 31`,
    expectAfter: expectTraceAfterUpgrade,
  },
];

describe.each(RELEASES)('SQLite files of the release before $before', ({ after, takeBack, expectAfter }) => {
  it(`open, their tasks resume, and ${after}`, async () => {
    const path = freshPath();
    const before = open(path);
    const seeded = await seedUpgradeTasks(before, T0);
    await before.close();
    const raw = new Database(path);
    raw.exec(takeBack);
    raw.close();

    const upgraded = open(path);
    await expectUpgradedTasksResume(upgraded, seeded, T0);
    await expectAfter(upgraded, T0 + 10_000);
  });
});
