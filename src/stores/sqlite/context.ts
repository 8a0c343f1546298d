// What the SQLite store's operations share: the connection, its statements, the payload codec, the change log and
// the write transactions; and the owner-scoped read they all start from.
import type { LookupMiss, TaskOwner, TaskSnapshot } from '../../tasks/task.js';
import type { ChangeLog } from './change-log.js';
import type { PayloadCodec } from './codec.js';
import type { SqliteDatabase } from './database.js';
import type { Queries } from './queries.js';
import type { TaskRow } from './rows.js';
import { missOf, toSnapshot } from '../core/rows.js';
import type { Transactions } from './transactions.js';

export interface StoreContext {
  db: SqliteDatabase;
  q: Queries;
  codec: PayloadCodec;
  log: ChangeLog;
  writes: Transactions;
}

/** The snapshot of a row read by getOwned (with its outstanding input requests while it waits for input). */
export function snapshotOf({ q, codec }: StoreContext, row: TaskRow): TaskSnapshot {
  const outstanding = row.status === 'input_required' ? q.outstandingInputs(row.id) : [];
  return toSnapshot(
    row,
    outstanding.map((input) => [input.key, input.request] as const),
    codec.open,
  );
}

/** The owner's task, or why there is none to use at `now`. */
export function lookup({ q }: StoreContext, id: string, owner: TaskOwner, now: number): TaskRow | LookupMiss {
  const row = q.getOwned(id, owner);
  return missOf(row, now) ?? (row as TaskRow);
}
