// TaskStore on PostgreSQL: SKIP LOCKED claims, writes fenced by the attempt number, group-committed creation,
// and a change feed carried across replicas by LISTEN/NOTIFY.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { IdempotencyConflictError, StoreUnavailableError } from '../../tasks/errors.js';
import { sameJson } from '../../tasks/json-equal.js';
import type { PayloadCipher } from '../../tasks/payload-cipher.js';
import type { RenewResult, TaskStats, TaskStore } from '../../tasks/store.js';
import type {
  ClaimedTask,
  JsonMap,
  KeyedTask,
  NewTask,
  TaskOwner,
  TaskSnapshot,
  TaskStatus,
} from '../../tasks/task.js';
import { TASK_EXPIRED_ERROR } from '../../tasks/task.js';
import { createChangeFeed } from './change-feed.js';
import { createPayloadCodec } from './codec.js';
import { missOf, writeAndNotify, type StoreContext } from './context.js';
import { createBatcher } from './create-batch.js';
import { createDb } from './db.js';
import { encodeTask, encodeTasks, type EncodedTask } from './encode.js';
import { finishRun } from './finish.js';
import { sqlState, translate } from './errors.js';

/** A unique violation of the idempotency key index. */
const isKeyTaken = (err: unknown): boolean =>
  sqlState(err) === '23505' && (err as { constraint?: unknown }).constraint === KEY_INDEX;
import { migrate } from './migrations.js';
import { POOL_APPLICATION_NAME, schemaNames } from './names.js';
import { answerInputs, requestCancel } from './owner-writes.js';
import { buildQueries, KEY_INDEX } from './queries.js';
import {
  toClaimedTask,
  toInspection,
  toNumber,
  toSnapshot,
  type ClaimRow,
  type InspectRow,
  type SnapshotRow,
  type TaskRow,
} from './rows.js';
import { createOwnedLister } from './list-owned.js';
import { createPostgresSessionStore } from './session-store.js';

export interface PostgresTaskStoreOptions {
  /** `postgres://user:password@host:port/database`; without it (and without `pool`) the PG* environment is used. */
  connectionString?: string;
  /** An existing pool (shared with other users); not ended by close(). Its own settings apply. */
  pool?: pg.Pool;
  /** Schema holding the store's tables (default `durable_mcp`); created and migrated on first use. */
  schema?: string;
  /** Connections in the store's own pool (default 10). */
  poolSize?: number;
  /** Server-side statement_timeout of the store's own connections (default 30 s; 0 keeps the server's setting). */
  statementTimeoutMs?: number;
  /**
   * Client-side bound on a connection attempt and on the wait for a pooled connection (default 5 s). With the
   * statement timeout plus one second as the client-side bound on each statement (a server that stops answering
   * never sends its statement_timeout error), a request gets "Task store unavailable" in bounded time.
   */
  connectTimeoutMs?: number;
  /** Encrypts arguments, input requests and answers, steps, results and errors at rest. */
  cipher?: PayloadCipher;
  /** With a cipher: seal every task (default) or only tasks of tools marked sensitive. */
  encrypt?: 'all' | 'sensitive';
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

const EXPIRED_ERROR = JSON.stringify(TASK_EXPIRED_ERROR);

function openPool(options: PostgresTaskStoreOptions): pg.Pool {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    statement_timeout: statementTimeoutMs,
    // The server's statement timeout answers first; this one covers a server (or network) that went silent.
    query_timeout: statementTimeoutMs > 0 ? statementTimeoutMs + 1_000 : undefined,
    // Claims and fenced writes are single statements that rely on READ COMMITTED re-checks, whatever the server's
    // default isolation is.
    options: '-c default_transaction_isolation=read\\ committed',
    application_name: POOL_APPLICATION_NAME,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    keepAlive: true,
  });
  // An idle connection that dies (server restart) is discarded by the pool; the next checkout reconnects.
  pool.on('error', () => undefined);
  // A checked-out client loses the pool's error listener: a dropped backend must not crash the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export function createPostgresTaskStore(
  options: PostgresTaskStoreOptions = {},
): TaskStore & { readonly pool: pg.Pool } {
  const names = schemaNames(options.schema);
  const ownsPool = options.pool === undefined;
  const pool = options.pool ?? openPool(options);
  const db = createDb({
    pool,
    ownsPool,
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
  const codec = createPayloadCodec(options.cipher, options.encrypt ?? 'all', async (id) => {
    const [row] = await db.query<{ sealed: boolean }>(q.isSealed, [id]);
    return row?.sealed;
  });
  const ctx: StoreContext = { db, q, codec, feed };
  const insert = async (tasks: EncodedTask[]): Promise<TaskSnapshot[]> => {
    let rows: TaskRow[];
    try {
      rows = await db.queryRaw<TaskRow>(q.insertTasks, encodeTasks(tasks));
    } catch (err) {
      // One task alone whose key is taken: not inserted (the batcher resolves it); in a batch, the batcher splits it.
      if (tasks.length === 1 && isKeyTaken(err)) return [];
      throw err;
    }
    feed.emitLocal(rows.map((r) => ({ taskId: r.id, runnable: true, cancelRequested: false })));
    return rows.map((row) => {
      codec.remember(row.id, row.sealed);
      return toSnapshot(row, codec.open);
    });
  };
  /** The live task holding an idempotency key, with its arguments (opened). */
  const keyed = async (owner: TaskOwner, tool: string, key: string) => {
    const [row] = await db.query<SnapshotRow>(q.keyed, [owner.tenant, owner.principal, tool, key]);
    return row;
  };
  /**
   * A task the insert left out because its idempotency key is held: the holder (same arguments), a conflict, or,
   * when the holder has expired, the key freed and the task inserted after all. Each turn of the loop either ends
   * or saw another writer move the key; a few turns settle any race.
   */
  const joinByKey = async (task: NewTask, encoded: EncodedTask): Promise<TaskSnapshot> => {
    const key = task.idempotencyKey;
    if (key === undefined) throw new Error(`task ${task.id} was not inserted`);
    for (let turn = 0; turn < 5; turn++) {
      const row = await keyed(task.owner, task.tool, key);
      if (row !== undefined && (row.expires_at === null || toNumber(row.expires_at) > task.createdAt)) {
        if (!sameJson(JSON.parse(codec.open(row.args)) as JsonMap, task.args))
          throw new IdempotencyConflictError(row.id);
        return toSnapshot(row, codec.open);
      }
      if (row !== undefined) await db.query(q.releaseKey, [row.id, task.createdAt]);
      const [inserted] = await insert([encoded]).catch((err: unknown) => {
        throw translate(err);
      });
      if (inserted !== undefined) return inserted;
    }
    throw new StoreUnavailableError(`idempotency key of task ${task.id} kept changing hands`);
  };
  const batcher = createBatcher<EncodedTask>((task: NewTask) => encodeTask(task, codec), insert, joinByKey);
  let closed = false;
  let closing: Promise<void> | undefined;

  return {
    pool,
    changes: feed.changes,
    listOwned: createOwnedLister(db, names.quoted, codec.open),
    sessions: createPostgresSessionStore(db, names.quoted),

    create(task) {
      if (closed) return Promise.reject(new StoreUnavailableError('store is closed'));
      return batcher.add(task);
    },

    async get(id, owner, now) {
      const [row] = await db.query<SnapshotRow>(q.getOwned, [id, owner.tenant, owner.principal]);
      const miss = missOf(row, now);
      return miss !== undefined || row === undefined ? (miss ?? 'not_found') : toSnapshot(row, codec.open);
    },

    async claim(workerId, leaseMs, now): Promise<ClaimedTask | undefined> {
      const [row] = await db.query<ClaimRow>(q.claim, [workerId, now + leaseMs, now, 1]);
      if (row === undefined) return undefined;
      codec.remember(row.id, row.sealed);
      return toClaimedTask(row, codec.open);
    },

    async claimBatch(workerId, leaseMs, now, max): Promise<ClaimedTask[]> {
      const rows = await db.query<ClaimRow>(q.claim, [workerId, now + leaseMs, now, max]);
      return rows
        .sort((a, b) => Number(a.created_at) - Number(b.created_at))
        .map((row) => {
          codec.remember(row.id, row.sealed);
          return toClaimedTask(row, codec.open);
        });
    },

    async renew(id, token, leaseMs, now): Promise<RenewResult> {
      const [row] = await db.query<{ cancel_requested: boolean }>(q.renew, [id, token, now + leaseMs]);
      return row === undefined
        ? { held: false, cancelRequested: false }
        : { held: true, cancelRequested: row.cancel_requested };
    },

    async saveStep(id, token, name, value, _now) {
      const seal = await codec.sealerOf(id);
      return (await db.query(q.saveStep, [id, token, name, seal(JSON.stringify(value))])).length === 1;
    },

    async saveStepFailure(id, token, name, failure, now) {
      const seal = await codec.sealerOf(id);
      const params = [id, token, name, failure.attempt, seal(JSON.stringify(failure)), now];
      return (await db.query(q.saveStepFailure, params)).length === 1;
    },

    async findByIdempotencyKey(owner, tool, key, now): Promise<KeyedTask | undefined> {
      const row = await keyed(owner, tool, key);
      if (row === undefined || missOf(row, now) !== undefined) return undefined;
      return { snapshot: toSnapshot(row, codec.open), args: JSON.parse(codec.open(row.args)) as JsonMap };
    },

    async nextWakeAt(now) {
      const [row] = await db.query<{ wake_at: string | number }>(q.nextWake, [now]);
      return row === undefined ? undefined : toNumber(row.wake_at);
    },

    async inspect(id) {
      const [row] = await db.query<InspectRow>(q.inspect, [id]);
      return row === undefined ? undefined : toInspection(row, codec.open);
    },

    setStatusMessage(id, token, message, now) {
      const change = { taskId: id, runnable: false, cancelRequested: false };
      return writeAndNotify(ctx, q.setStatusMessage, [id, token, message, now], change);
    },

    finish: (id, token, outcome, now) => finishRun(ctx, id, token, outcome, now),
    answer: (id, owner, responses, now) => answerInputs(ctx, id, owner, responses, now),
    requestCancel: (id, owner, now) => requestCancel(ctx, id, owner, now),

    async expire(now) {
      const rows = await db.query<{ id: string }>(q.expire, [EXPIRED_ERROR, now]);
      feed.emitLocal(rows.map((r) => ({ taskId: r.id, runnable: false, cancelRequested: true })));
      return rows.length;
    },

    async purge(now, graceMs) {
      const [row] = await db.query<{ n: number }>(q.purge, [now - graceMs]);
      return row?.n ?? 0;
    },

    async countActive(owner) {
      const [row] = await db.query<{ n: number }>(q.countActive, [owner.tenant, owner.principal]);
      return row?.n ?? 0;
    },

    async stats(now): Promise<TaskStats> {
      const [row] = await db.query<Record<TaskStatus | 'runnable', number>>(q.stats, [now]);
      const n = (key: TaskStatus | 'runnable'): number => row?.[key] ?? 0;
      return {
        byStatus: {
          working: n('working'),
          input_required: n('input_required'),
          completed: n('completed'),
          failed: n('failed'),
          cancelled: n('cancelled'),
        },
        runnable: n('runnable'),
      };
    },

    async countRunnable(now) {
      const [row] = await db.query<{ n: number }>(q.countRunnable, [now]);
      return row?.n ?? 0;
    },

    close() {
      closed = true;
      // Creations already queued are committed (or fail) before the pool ends; a second call awaits the first.
      closing ??= (async () => {
        await batcher.drain();
        await feed.close();
        await db.close();
      })();
      return closing;
    },
  };
}
