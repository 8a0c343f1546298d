// TaskStore on PostgreSQL: SKIP LOCKED claims, writes fenced by the attempt number, group-committed creation,
// and a change feed carried across replicas by LISTEN/NOTIFY.
import type { BuiltInTaskStore } from '../built-in.js';
import { postgresAdmin } from './admin.js';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { createPayloadSealing, type PayloadSealingOptions } from '../payload-sealing.js';
import { createChangeFeed } from './change-feed.js';
import { createPayloadCodec } from './codec.js';
import type { StoreContext } from './context.js';
import { createTaskCreation, keyedLookup } from './creations.js';
import { createDb } from './db.js';
import { createOwnedLister } from './list-owned.js';
import { postgresStreams } from './streams.js';
import { postgresLiveInput } from './live-input.js';
import { postgresOutsideEvents } from './outside-events.js';
import { migrate } from './migrations.js';
import { schemaNames } from './names.js';
import { answerInputs, requestCancel } from './owner-writes.js';
import { familyReads } from './children.js';
import { openPool, type PostgresPoolOptions } from './pool.js';
import { buildQueries } from './queries.js';
import { reads } from './reads.js';
import { runWrites } from './run-writes.js';
import { createSlots } from './slots.js';
import { createPauses } from './pauses.js';
import { createPostgresSessionStore } from './session-store.js';
import { sweeps } from './sweeps.js';

export interface PostgresTaskStoreOptions extends PostgresPoolOptions, PayloadSealingOptions {
  /** An existing pool (shared with other users); not ended by close(). Its own settings apply. */
  pool?: pg.Pool;
  /** Schema holding the store's tables (default `durable_mcp`); created and migrated on first use. */
  schema?: string;
  /** Hear changes made by other processes through LISTEN/NOTIFY (default true). */
  listen?: boolean;
  /** How often the LISTEN connection is probed, to notice a silently dead one (default 30 s). */
  pollMs?: number;
  /** Apply pending migrations before the first statement (default true; false when `durable-mcp migrate` runs). */
  migrate?: boolean;
  /**
   * Run statements as named prepared statements, parsed and planned once per connection (default true). Turn off
   * behind a connection pooler that does not keep prepared statements (PgBouncer in transaction mode before 1.21).
   */
  preparedStatements?: boolean;
}

/** The pool, the database, the SQL, the payload codec and the change feed of one store instance. */
function openContext(options: PostgresTaskStoreOptions): StoreContext & { pool: pg.Pool } {
  const names = schemaNames(options.schema);
  const pool = options.pool ?? openPool(options);
  const db = createDb({
    pool,
    ownsPool: options.pool === undefined,
    preparedStatements: options.preparedStatements,
    prepare: options.migrate === false ? undefined : () => migrate(pool, names.schema).then(() => undefined),
  });
  // This instance's id travels in its notifications, so it can ignore them when they come back.
  const origin = randomBytes(8).toString('hex');
  const q = buildQueries(names, origin);
  const feed = createChangeFeed({
    origin,
    channel: names.channel,
    listen: options.listen !== false,
    probeMs: options.pollMs ?? 30_000,
    // The LISTEN client connects like the pool's clients (pg keeps the password off the enumerable options).
    config: () => ({ ...pool.options, password: pool.options.password }),
  });
  const codec = createPayloadCodec(createPayloadSealing(options), async (id) => {
    const [row] = await db.query<{ sealed: boolean }>(q.isSealed, [id]);
    return row?.sealed;
  });
  return { pool, db, q, codec, feed, quotedSchema: names.quoted };
}

export function createPostgresTaskStore(
  options: PostgresTaskStoreOptions = {},
): BuiltInTaskStore & { readonly pool: pg.Pool } {
  const ctx = openContext(options);
  const { pool } = ctx;
  const keyed = keyedLookup(ctx);
  const batcher = createTaskCreation(ctx, keyed);
  const read = reads(ctx, keyed);
  const slots = createSlots(ctx);
  const pauses = createPauses(ctx);
  let closed = false;
  let closing: Promise<void> | undefined;

  return {
    pool,
    changes: ctx.feed.changes,
    listOwned: createOwnedLister(ctx.db, ctx.quotedSchema, ctx.codec.open),
    sessions: createPostgresSessionStore(ctx.db, ctx.quotedSchema, ctx.codec),
    create(task) {
      if (closed) return Promise.reject(new StoreUnavailableError('store is closed'));
      return batcher.add(task);
    },
    creationBatches: () => batcher.batches(),
    admin: { ...postgresAdmin(ctx, read.inspect), ...pauses.admin },
    liveInput: postgresLiveInput(ctx),
    streams: postgresStreams(ctx),
    events: postgresOutsideEvents(ctx),
    ...read,
    ...runWrites(ctx, slots, pauses),
    freeSlots: slots.freeSlots,
    acquireSlot: slots.acquireSlot,
    releaseSlot: slots.releaseSlot,
    answer: (id, owner, responses, now) => answerInputs(ctx, id, owner, responses, now),
    requestCancel: (id, owner, now) => requestCancel(ctx, id, owner, now),
    ...sweeps(ctx),
    ...familyReads(ctx),
    close() {
      closed = true;
      // Creations already queued are committed (or fail) before the pool ends; a second call awaits the first.
      closing ??= (async () => {
        await batcher.drain();
        await ctx.feed.close();
        await ctx.db.close();
      })();
      return closing;
    },
  };
}
