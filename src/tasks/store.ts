// The TaskStore port: what the task service and the workers need from durable storage.
import type {
  ClaimedTask,
  ConcurrencyLimit,
  JsonValue,
  JsonObject,
  LookupMiss,
  NewTask,
  RunOutcome,
  StepFailure,
  TaskOwner,
  TaskProgress,
  TaskSnapshot,
  TaskStatus,
} from './task.js';
import type { ChildTaskRef, TaskInspection } from './inspection.js';
import type { SessionStore } from './sessions.js';
import type { TaskAdmin } from './admin.js';
import type { TaskStreamsPort } from './streams.js';
import type { OutsideEventPort } from './events.js';

/**
 * Which tasks a process can run: those of the tools it serves whose recorded version it can replay (a task recorded
 * without a version: any), and those of tools it does not serve once untouched since `orphanedBefore` (it fails them:
 * their tool is gone). Other tasks wait for a process that can run them.
 */
export interface ClaimScope {
  /** Tool name → the versions its code here replays. */
  tools: Record<string, readonly string[]>;
  /** Tasks of tools not in `tools`, updated at or before this time, are claimed too; undefined: never. */
  orphanedBefore?: number;
}

/** Runnable tasks of one tool and version that a scope leaves out. */
export interface OutOfScopeTasks {
  tool: string;
  version: string | null;
  count: number;
}

export interface SaveStepOptions {
  /** When the step's successful attempt started (ms). */
  startedAt?: number;
  /**
   * Refuse the value (ActiveLimitError, quota `stored-bytes`; nothing written) when it would put the bytes the task's
   * owner stores (storedBytes) over this.
   */
  storedBytesLimit?: number;
}

export interface RenewResult {
  /** False when the lease was lost (taken over, or the task ended): the run must stop. */
  held: boolean;
  cancelRequested: boolean;
}

export type AnswerResult = { ok: true; resumed: boolean } | { ok: false; miss: LookupMiss };
export type CancelResult =
  { ok: true; cancelledNow: boolean; running: boolean } | { ok: false; miss: LookupMiss };

/** Emitted after a committed change of a task (optional capability). */
export interface TaskChange {
  taskId: string;
  /** True when the task became runnable (created, input answered, released, lease expired). */
  runnable: boolean;
  cancelRequested: boolean;
  /**
   * When the task, waiting, becomes runnable (a start a claim of this process reserved under a rate limit): a worker
   * of the process wakes then. Only on changes heard in the process that made them.
   */
  wakeAt?: number;
  /**
   * The task as this change committed it, when the store had it at hand (the committing statement returned it).
   * Lets subscribers of a process skip a read per change. Only for changes whose snapshot is in the task's own
   * row: never while input_required (the requests are stored apart). A store that sets it numbers every snapshot
   * it hands out (TaskSnapshot.revision), reads included: changes and reads may arrive out of commit order.
   */
  committed?: CommittedTask;
}

export interface CommittedTask {
  /** The snapshot's revision, known without building it. */
  revision: number;
  /** Until then (ms; null: never) the snapshot is what `get` answers its owner; after it `get` answers 'expired'. */
  expiresAt: number | null;
  /**
   * Builds the snapshot on first call (decoding its payloads: only a process with subscribers pays for it) and
   * returns the same one after; undefined when its payloads cannot be decoded (subscribers then read the task).
   */
  snapshot(): TaskSnapshot | undefined;
}

export interface TaskStats {
  byStatus: Record<TaskStatus, number>;
  runnable: number;
  /** Working tasks parked until a slot of their concurrency key frees (a store without concurrency limits: absent). */
  parked?: number;
  /** The parked tasks by tool (present with `parked`; tools without parked tasks absent). */
  parkedByTool?: Record<string, number>;
  /**
   * Working tasks waiting for the start a claim reserved for them under the rate limit of their key, by tool (tools
   * without any absent; a store without rate limits: absent).
   */
  rateWaitsByTool?: Record<string, number>;
  /** Working tasks held back by an operator's pause (TaskAdmin.pause; a store without pauses: absent). */
  paused?: number;
  /** The paused tasks by tool (present with `paused`; tools without paused tasks absent). */
  pausedByTool?: Record<string, number>;
}

/** A task's place among child tasks (TaskStore.family). */
export interface TaskFamily {
  /** The task whose run started it (ctx.callTool); absent for a caller's own task. */
  parentId?: string;
  /** The tasks its runs started, in creation order (at most MAX_FAMILY_CHILDREN, the first ones). */
  children: ChildTaskRef[];
}

/** A page of one owner's tasks, in creation order: those after `after` (exclusive), at most `limit`. */
export interface TaskPage {
  after?: { createdAt: number; id: string };
  limit: number;
}

export interface ChangeFeed {
  /**
   * `onResync`, if given, is told whenever the feed starts or resumes hearing other processes' changes (a listening
   * connection opened or reopened): changes committed before may have gone unheard, so what the subscriber watches
   * must be read again.
   */
  subscribe(listener: (change: TaskChange) => void, onResync?: () => void): () => void;
}

/**
 * Input a run asks for while it stays live (optional; ExecutionContext.waitForInput): for input that a replay cannot
 * ask again because something live waits on the answer (a 2025-11-25 upstream's request on its open session). The
 * task is `input_required` with the requests while the run keeps its lease, so that no claim takes it; `answer`
 * takes the answers as for any input, and the run reads them. Every method but `revive` is fenced by the run's token
 * (false or undefined: the run no longer holds the task).
 */
export interface LiveInputPort {
  /**
   * The task, `working` under the run's lease, becomes `input_required` with `requests` (each key new to the task)
   * and `statusMessage`, keeping the lease; no claim takes it until the lease lapses.
   */
  ask(
    id: string,
    token: number,
    requests: Record<string, JsonObject>,
    statusMessage: string,
    now: number,
  ): Promise<boolean>;
  /** The answers given so far to `keys` (answered ones only). */
  answers(id: string, token: number, keys: string[]): Promise<Record<string, JsonObject> | undefined>;
  /**
   * Ends the run's wait: the task is `working` again under the run's lease (an answer that completed the input made
   * it so already), and the requests still unanswered are withdrawn (`statusMessage` then says so).
   */
  end(id: string, token: number, statusMessage: string, now: number): Promise<boolean>;
  /**
   * Tasks waiting for live input whose lease lapsed (the run's process is gone) become runnable again, `working`
   * with their unanswered requests withdrawn, keeping their place in line: a claim replays them as after any
   * crash. At most `max`; returns how many.
   */
  revive(now: number, max: number): Promise<number>;
}

export type { AppendResult, StreamBounds, StreamChunk, StreamPage, TaskStreamsPort } from './streams.js';

export interface TaskStore {
  /**
   * Durably inserts the task; resolves only after commit. Concurrent calls may share one transaction. With an
   * idempotency key that names a live task of the same owner and tool (not past its TTL at `createdAt`), nothing is
   * inserted: it resolves with that task's snapshot (another id) when the arguments are the same, and rejects with
   * IdempotencyConflictError when they differ. The key of an expired task passes to the new one.
   */
  create(task: NewTask): Promise<TaskSnapshot>;
  /**
   * What `create` would answer for a call with this idempotency key and `args`, without inserting: the owner's live
   * task of `tool` holding the key when it was created with the same arguments; a rejection with
   * IdempotencyConflictError when with other ones; undefined when no live task holds the key.
   */
  findByIdempotencyKey(
    owner: TaskOwner,
    tool: string,
    key: string,
    args: JsonObject,
    now: number,
  ): Promise<TaskSnapshot | undefined>;
  /** The owner's view, or why there is none. */
  get(id: string, owner: TaskOwner, now: number): Promise<TaskSnapshot | LookupMiss>;
  /**
   * As `get`, but the answer itself when the store knows it at once (a finished task it remembers, a row it read
   * with nothing waiting to be made durable), else a promise of it. Optional: without it, callers use `get`.
   */
  getNow?(
    id: string,
    owner: TaskOwner,
    now: number,
  ): TaskSnapshot | LookupMiss | Promise<TaskSnapshot | LookupMiss>;
  /**
   * Claims one runnable task (one whose lease expired, or whose wait is over) for `leaseMs`: the first in line of
   * those in `scope` (any, without one).
   */
  claim(workerId: string, leaseMs: number, now: number, scope?: ClaimScope): Promise<ClaimedTask | undefined>;
  /** Up to `max` claims in one write (optional; a worker with free slots otherwise claims one at a time). */
  claimBatch?(
    workerId: string,
    leaseMs: number,
    now: number,
    max: number,
    scope?: ClaimScope,
  ): Promise<ClaimedTask[]>;
  /**
   * Runnable tasks of `scope`'s tools that `scope` leaves out (a version it cannot replay, recorded by other code),
   * by tool and version: what waits for a process that can run it.
   */
  outOfScope?(scope: ClaimScope, now: number): Promise<OutOfScopeTasks[]>;
  /**
   * Marks as waiting for a version (optional) the runnable tasks of `scope`'s tools that `scope` leaves out and that no
   * run has held since `before` (untouched since then, any lease ended by then): until a run claims one, its owner
   * sees a status message saying it waits for a server running its version (versionWaitMessage). At most `max` per
   * call, each a change of the task; returns how many it marked.
   */
  markVersionWaits?(scope: ClaimScope, now: number, before: number, max: number): Promise<number>;
  renew(id: string, token: number, leaseMs: number, now: number): Promise<RenewResult>;
  /**
   * Memoizes a step result, saved at `now`; false when the lease is no longer held. `options.startedAt`: when the
   * attempt that produced it started (kept for operators; a store may ignore it).
   */
  saveStep(
    id: string,
    token: number,
    name: string,
    value: JsonValue,
    now: number,
    options?: SaveStepOptions,
  ): Promise<boolean>;
  /** Records a failed attempt of a step (the count becomes `failure.attempt`); false when the lease is no longer held. */
  saveStepFailure(
    id: string,
    token: number,
    name: string,
    failure: StepFailure,
    now: number,
  ): Promise<boolean>;
  /**
   * Sets the task's statusMessage; with `progress`, also keeps it as the progress shown last (TaskSnapshot.progress,
   * ClaimedTask.progress). False when the lease is no longer held.
   */
  setStatusMessage(
    id: string,
    token: number,
    message: string,
    now: number,
    progress?: TaskProgress,
  ): Promise<boolean>;
  /**
   * Ends a run: terminal transitions are single conditional writes; false when the lease was lost or the task had ended.
   * A child task (NewTask.parent) ending so ends its parent's wait in the same transaction (the parent is due now, and
   * a change says it is runnable); a parent that begins a wait after a child ended during its run is due at once.
   */
  finish(id: string, token: number, outcome: RunOutcome, now: number): Promise<boolean>;
  /** Answers outstanding input keys; unknown, answered and malformed keys are ignored. */
  answer(
    id: string,
    owner: TaskOwner,
    responses: Record<string, JsonObject>,
    now: number,
  ): Promise<AnswerResult>;
  /**
   * Cancels the owner's task: at once when no run holds it, otherwise the run is asked to stop. Its child tasks
   * (NewTask.parent) not `detached` are cancelled the same way, and theirs, in the same transaction. A task that ends
   * so, as any child ending, ends its parent's wait.
   */
  requestCancel(id: string, owner: TaskOwner, now: number): Promise<CancelResult>;
  /**
   * The owner's task's parent and children (optional; child tasks): undefined when the owner has no such task (an
   * expired one included while it is kept).
   */
  family?(id: string, owner: TaskOwner): Promise<TaskFamily | undefined>;
  /** Marks non-terminal tasks past their TTL as failed ("task expired"); returns how many. */
  expire(now: number): Promise<number>;
  /** Deletes tasks whose TTL ended more than `graceMs` ago (and expired one-time keys); returns how many tasks. */
  purge(now: number, graceMs: number): Promise<number>;
  /**
   * Records a one-time key (a used MRTR `requestState`) until `expiresAt`: true when this call recorded it, false
   * when it was already recorded (by any process on the store). Atomic: of concurrent calls with one key, one wins.
   * `purge` deletes the keys whose expiry has passed.
   */
  consumeOnce(key: string, expiresAt: number): Promise<boolean>;
  /** Non-terminal tasks of one owner (for the per-principal cap). */
  countActive(owner: TaskOwner): Promise<number>;
  /**
   * The bytes one owner's kept tasks store, until they are purged (optional; the byte quota): their arguments, results,
   * step values, input requests and answers, as stored (a sealed value counts sealed). Kept as a count, not summed.
   */
  storedBytes?(owner: TaskOwner): Promise<number>;
  /**
   * Concurrency limits (NewTask.concurrency; optional): makes runnable again, in their order, as many parked tasks
   * of each key as it has free slots, counting a slot whose run's lease lapsed before `now` as free (a run's ending
   * already does this for its own key; this catches lapsed leases and endings that did not). Returns how many.
   */
  freeSlots?(now: number): Promise<number>;
  /**
   * Takes a slot of `holder.slot.key` for a holder other than a task's claim (optional; per-step limits and calls that
   * run within their request): true when the key, counting the slots runs hold and the live holders, had one free
   * (the holder's own run's slot not counted), false when it is full. Taking again under the same `holder.id` while
   * it still holds renews it (a call's `until` moves on) and answers true.
   */
  acquireSlot?(holder: SlotHolder, now: number): Promise<boolean>;
  /** Frees the slot `holderId` took (nothing if it holds none), and makes parked tasks of its key runnable. */
  releaseSlot?(holderId: string, now: number): Promise<void>;
  /** The earliest wake-up after `now` of a waiting task (optional; workers without it find due tasks by polling). */
  nextWakeAt?(now: number): Promise<number | undefined>;
  /** Everything kept about a task, whoever owns it (optional; operators' tools). */
  inspect?(id: string, now: number): Promise<TaskInspection | undefined>;
  /** Task counts by status and the runnable backlog (optional; for metrics). */
  stats?(now: number): Promise<TaskStats>;
  /** The group-committed creation batches this instance ended so far (optional; for metrics: PostgreSQL). */
  creationBatches?(): CreationBatches;
  readonly changes?: ChangeFeed;
  /**
   * The operators' port: every task within a tenant scope, whoever owns it (optional; the operator API, the
   * `durable-mcp admin` commands). Owners' paths never use it.
   */
  readonly admin?: TaskAdmin;
  /** Input asked while the run stays live (optional: HandlerContext.waitForInput needs it). */
  readonly liveInput?: LiveInputPort;
  /** Streams of partial results (optional: HandlerContext.stream needs it). */
  readonly streams?: TaskStreamsPort;
  /** Events from outside a task (optional: HandlerContext.waitForEvent and the event routes need it). */
  readonly events?: OutsideEventPort;
  /**
   * The owner's unexpired tasks ordered by (createdAt, id), without input requests (optional; the 2025-11-25
   * `tasks/list`).
   */
  listOwned?(owner: TaskOwner, page: TaskPage, now: number): Promise<TaskSnapshot[]>;
  close(): Promise<void>;
}

/**
 * The creation batches of one store instance since it opened (TaskStore.creationBatches): how many batch inserts
 * ended (a batch that fails on one task's data is retried a task at a time, each such insert counted), the
 * creations they carried, and the time they took, summed. Its mean is a batch's round trip: the statement, its
 * commit, and the wait for the process's event loop to read the answer.
 */
export interface CreationBatches {
  batches: number;
  tasks: number;
  seconds: number;
}

export type { JsonObject, SessionStore };

/** A holder of a concurrency slot other than a task's claim (TaskStore.acquireSlot). */
export interface SlotHolder {
  /** Names the holding (unique: a run's step, a call); at most 200 characters. */
  id: string;
  /** The key and its limit; `derived`: computed from a call (kept as a digest where the store seals such keys). */
  slot: ConcurrencyLimit;
  /** The holder's tool is sensitive: a derived key is kept as its tasks' would be (PayloadSealing). */
  sensitive?: boolean;
  /**
   * A step of this run holds it: counted while the run holds its lease (a crash frees it when the lease lapses), and
   * the run's own task slot is not counted against it. Otherwise `until` bounds it.
   */
  run?: { taskId: string; token: number };
  /** A holder without a run: counted until then (a dead process frees it then); renew it while holding. */
  until?: number;
}

/** What a worker's runs do to their tasks: claim them, renew leases, save steps and status messages, end them. */
export type RunWrites = Pick<
  TaskStore,
  | 'claim'
  | 'claimBatch'
  | 'outOfScope'
  | 'markVersionWaits'
  | 'renew'
  | 'saveStep'
  | 'saveStepFailure'
  | 'setStatusMessage'
  | 'finish'
>;
