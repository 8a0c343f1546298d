// TaskStore on SQLite: conditional writes fenced by the attempt number, group-committed creation, in-process change feed.
import type { BuiltInTaskStore } from '../built-in.js';
import { sqliteAdmin } from './admin.js';
import { createPayloadSealing, type PayloadSealingOptions } from '../payload-sealing.js';
import { createChangeLog } from './change-log.js';
import { createPayloadCodec } from './codec.js';
import type { StoreContext } from './context.js';
import { creationLane } from './creations.js';
import { openSqlite, type OpenSqliteOptions, type SqliteDatabase } from './database.js';
import { createGroupCommit } from './group-commit.js';
import { createOwnedLister } from './list-owned.js';
import { sqliteStreams } from './streams.js';
import { sqliteLiveInput } from './live-input.js';
import { ownerWrites } from './owner-writes.js';
import { familyReads } from './children.js';
import { prepareQueries, type Queries } from './queries.js';
import { sqliteOutsideEvents } from './outside-events.js';
import { reads } from './reads.js';
import { endingLane, runWrites } from './run-writes.js';
import { createSqliteSessionStore } from './session-store.js';
import { holderSlots, slotSweep } from './slots.js';
import { sqlitePauses } from './pauses.js';
import { sweeps } from './sweeps.js';
import { createTerminalCache } from '../core/terminal-cache.js';
import { createTransactions } from './transactions.js';

export interface SqliteTaskStoreOptions extends OpenSqliteOptions, PayloadSealingOptions {
  /** An already opened database (shared with other users of the file); not closed by the store. */
  db?: SqliteDatabase;
  /** How often to look for changes committed by other processes on the same file (default 100 ms). */
  crossProcessPollMs?: number;
}

/** The connection, its statements, the payload codec, the change log and the write transactions of one store. */
function openContext(options: SqliteTaskStoreOptions): StoreContext {
  const db = options.db ?? openSqlite(options);
  // The codec reads a task's sealed flag through the statements, which seal with the codec.
  const codec = createPayloadCodec(createPayloadSealing(options), (id) => q.isSealed(id));
  const q: Queries = prepareQueries(db, codec);
  const log = createChangeLog(db, q, options.crossProcessPollMs);
  const writes = createTransactions(db, options, log);
  return { db, q, codec, log, writes };
}

export function createSqliteTaskStore(
  options: SqliteTaskStoreOptions,
): BuiltInTaskStore & { readonly db: SqliteDatabase } {
  const ownsDb = options.db === undefined;
  const ctx = openContext(options);
  const { db } = ctx;
  // Creations and run endings queued in the same turn share one transaction; one WAL sync covers every transaction
  // committed before it started (wal-sync.ts).
  const grouped = createGroupCommit(
    (fn) => ctx.writes.tx(fn),
    (fn) => ctx.writes.afterSync(fn),
  );
  const create = grouped.lane(creationLane(ctx));
  const end = grouped.lane(endingLane(ctx));
  const terminal = createTerminalCache();
  // A finished task changes only when an operator retries or purges it: whichever process did, this one forgets it.
  ctx.log.changes.subscribe((change) => terminal.forget(change.taskId));
  const read = reads(ctx, terminal);
  const owner = ownerWrites(ctx);
  let closed = false;

  return {
    db,
    changes: ctx.log.changes,
    listOwned: createOwnedLister(db, ctx.codec.open),
    sessions: createSqliteSessionStore(db, ctx.codec),
    admin: {
      ...sqliteAdmin(ctx, { requestCancel: owner.requestCancel, inspect: read.inspect }),
      ...sqlitePauses(ctx),
    },
    liveInput: sqliteLiveInput(ctx),
    streams: sqliteStreams(ctx),
    events: sqliteOutsideEvents(ctx),
    create,
    ...read,
    ...runWrites(ctx, end),
    ...owner,
    ...sweeps(ctx, terminal),
    ...slotSweep(ctx),
    ...holderSlots(ctx),
    ...familyReads(ctx),
    async close() {
      if (closed) return;
      closed = true;
      await grouped.close();
      await ctx.writes.close();
      ctx.log.close();
      if (ownsDb) db.close();
    },
  };
}
