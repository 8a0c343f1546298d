// What the store's operations share: the database, the SQL, the payload codec and the change feed.
import type { TaskChange } from '../../tasks/store.js';
import type { LookupMiss } from '../../tasks/task.js';
import type { StoreChangeFeed } from './change-feed.js';
import type { PayloadCodec } from './codec.js';
import type { Db, Params } from './db.js';
import type { Queries } from './queries.js';
import { toNumber } from './rows.js';

export interface StoreContext {
  db: Db;
  q: Queries;
  codec: PayloadCodec;
  feed: StoreChangeFeed;
}

/**
 * Runs one statement whose rows are its notifications (none when its condition did not hold); once it has
 * committed, emits `change` to this process's subscribers. True when it wrote.
 */
export async function writeAndNotify(
  { db, feed }: StoreContext,
  sql: string,
  params: Params,
  change: TaskChange,
): Promise<boolean> {
  const rows = await db.query(sql, params);
  if (rows.length > 0) feed.emitLocal([change]);
  return rows.length > 0;
}

/** Why an owner-scoped lookup found nothing usable at `now`, or undefined when the row is live. */
export function missOf(
  row: { expires_at: string | number | null } | undefined,
  now: number,
): LookupMiss | undefined {
  if (row === undefined) return 'not_found';
  return row.expires_at !== null && toNumber(row.expires_at) <= now ? 'expired' : undefined;
}
