// SQL text of the PostgreSQL task store, one file per concern under sql/. Every write after a claim is fenced by the
// attempt number and a held lease; writes that change a task also pg_notify in the same statement, so the notice
// is sent only on commit. Every UPDATE of a task bumps its revision.
import type { SchemaNames } from './names.js';
import { adminSql } from './sql/admin.js';
import { childSql } from './sql/children.js';
import { creationSql, debounceSql } from './sql/creation.js';
import { endingSql } from './sql/endings.js';
import { liveInputSql } from './sql/live-input.js';
import { notifier } from './sql/fragments.js';
import { ownerWriteSql } from './sql/owner-writes.js';
import { rateSql } from './sql/rate-limits.js';
import { pauseSql } from './sql/pauses.js';
import { outsideEventSql } from './sql/outside-events.js';
import { readSql } from './sql/reads.js';
import { runSql } from './sql/runs.js';
import { scopeSql } from './sql/scope.js';
import { flowSql, holderSql, slotSql } from './sql/slots.js';
import { streamSql } from './sql/streams.js';
import { sweepSql } from './sql/sweeps.js';

/** The unique index of idempotency keys (migration 7): a violation of it means "this key is taken". */
export const KEY_INDEX = 'tasks_idempotency';
/** The unique index of debounce keys (migration 26): a violation of it means "this debounce key is taken". */
export const DEBOUNCE_INDEX = 'tasks_debounce';

export function buildQueries({ quoted: s, channel }: SchemaNames, origin: string) {
  const notify = notifier(channel, origin);
  return {
    ...creationSql(s, notify),
    ...debounceSql(s, notify),
    ...readSql(s),
    ...runSql(s, notify),
    ...scopeSql(s, notify),
    ...endingSql(s, notify),
    ...liveInputSql(s, notify),
    ...ownerWriteSql(s, notify),
    ...sweepSql(s, notify),
    ...slotSql(s, notify),
    ...rateSql(s, notify),
    ...flowSql(s),
    ...pauseSql(s, notify),
    ...holderSql(s),
    ...streamSql(s),
    ...childSql(s, notify),
    ...outsideEventSql(s, notify),
    /** The operators' port (admin.ts). */
    admin: adminSql(s, notify),
  };
}

export type Queries = ReturnType<typeof buildQueries>;
