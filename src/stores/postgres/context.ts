// What the store's operations share: the database, the SQL, the payload codec, the change feed and the schema.
import type { TaskChange } from '../../tasks/store.js';
import type { TaskSnapshot } from '../../tasks/task.js';
import type { StoreChangeFeed } from './change-feed.js';
import type { PayloadCodec } from './codec.js';
import type { Db, Params } from './db.js';
import type { Queries } from './queries.js';
import { toNumber, toNumberOrNull, toSnapshot, type SnapshotColumns } from './rows.js';
import type { Opener } from '../payload-sealing.js';

export interface StoreContext {
  db: Db;
  q: Queries;
  codec: PayloadCodec;
  feed: StoreChangeFeed;
  /** The store's schema, quoted for SQL text. */
  quotedSchema: string;
}

/**
 * Runs one statement whose rows are its notifications (none when its condition did not hold); once it has
 * committed, emits `change` to this process's subscribers, with the task as committed when the statement returned
 * it (withCommitted). True when it wrote.
 */
export async function writeAndNotify(
  { db, feed, codec }: StoreContext,
  sql: string,
  params: Params,
  change: TaskChange,
): Promise<boolean> {
  const [row] = await db.query<Partial<SnapshotColumns>>(sql, params);
  if (row !== undefined) feed.emitLocal([withCommitted(change, row, codec.open)]);
  return row !== undefined;
}

/**
 * `change` carrying the snapshot of `row` (TaskChange.committed) when the row holds all of it: the statement
 * returned SNAPSHOT_COLUMNS and the task is not waiting for input (its requests live in task_inputs). Otherwise
 * `change` as is: subscribers then read the task. The snapshot is decoded only if a subscriber asks for it.
 */
export function withCommitted(
  change: TaskChange,
  row: Partial<SnapshotColumns> | undefined,
  open: Opener,
): TaskChange {
  if (row?.status === undefined || row.revision === undefined || row.status === 'input_required')
    return change;
  const columns = row as SnapshotColumns;
  let built: TaskSnapshot | undefined;
  let tried = false;
  const snapshot = (): TaskSnapshot | undefined => {
    if (!tried) {
      tried = true;
      try {
        built = toSnapshot(columns, open);
      } catch {
        built = undefined; // a payload that cannot be opened: subscribers read instead
      }
    }
    return built;
  };
  const expiresAt = toNumberOrNull(columns.expires_at);
  return { ...change, committed: { revision: toNumber(columns.revision), expiresAt, snapshot } };
}
