// A new task as both stores write it: its columns serialised, and its payloads sealed or not as decided at creation.
import type { NewTask } from '../tasks/task.js';
import { sealCaps, sealedAt, sealStatus, type PayloadSealing } from './payload-sealing.js';

export interface EncodedTask {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  /** NewTask.toolVersion, or null. */
  toolVersion: string | null;
  args: string;
  statusMessage: string | null;
  createdAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | null;
  replay: boolean;
  caps: string;
  sealed: boolean;
  answers: [key: string, answer: string][];
  idempotencyKey: string | null;
  /** NewTask.activeLimit, or null. */
  activeLimit: number | null;
  /** NewTask.storedLimit, or null. */
  storedLimit: number | null;
  /** NewTask.tenantLimits, each or null. */
  tenantActiveLimit: number | null;
  tenantStoredLimit: number | null;
  /** NewTask.storedBytesLimit, or null. */
  storedBytesLimit: number | null;
  /** NewTask.concurrency, or null. */
  concurrencyKey: string | null;
  concurrencyLimit: number | null;
  /** NewTask.concurrency.hold: 'task', or null (a slot held while a run executes). */
  concurrencyHold: 'task' | null;
  /** NewTask.rateLimit, or null (its key sealed as a concurrency key is). */
  rateKey: string | null;
  rateLimit: number | null;
  ratePeriodMs: number | null;
  /** NewTask.priority, or 0. */
  priority: number;
  /** NewTask.debounce's key as kept (a keyed digest when derived and sealed), or null. */
  debounceKey: string | null;
  /** The end of a debounced task's window (createdAt + periodMs): it waits until then, as after a sleep. */
  wakeAt: number | null;
  /** NewTask.trace, each or null (never sealed: ids of spans, no payload). */
  traceParent: string | null;
  traceState: string | null;
  /** NewTask.parent's id, or null (migration 28). */
  parentId: string | null;
  /** NewTask.parent.detached. */
  detached: boolean;
}

/** Serialises (and seals) one task; throws for that task alone when its payload is not JSON. */
export function encodeTask(
  task: NewTask,
  sealing: PayloadSealing,
  sealed = sealing.sealsNew(task),
): EncodedTask {
  // Where a value is kept is bound into its ciphertext only: an unsealed task needs no place.
  const seal = (json: string, column: string, key?: string): string =>
    sealed ? sealing.sealFor(true, json, sealedAt(column, task.id, key)) : json;
  return {
    id: task.id,
    tenant: task.owner.tenant,
    principal: task.owner.principal,
    tool: task.tool,
    toolVersion: task.toolVersion ?? null,
    args: seal(JSON.stringify(task.args), 'tasks.args'),
    statusMessage:
      task.statusMessage === undefined ? null : sealStatus(sealing, sealed, task.id, task.statusMessage),
    createdAt: task.createdAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs ?? null,
    replay: task.replayAfterCrash,
    caps: sealCaps(sealing, sealed, task.id, task.clientCapabilities),
    sealed,
    answers: Object.entries(task.answers).map(([key, value]) => [
      key,
      seal(JSON.stringify(value), 'task_inputs.answer', key),
    ]),
    idempotencyKey: task.idempotencyKey ?? null,
    activeLimit: task.activeLimit ?? null,
    storedLimit: task.storedLimit ?? null,
    tenantActiveLimit: task.tenantLimits?.active ?? null,
    tenantStoredLimit: task.tenantLimits?.stored ?? null,
    storedBytesLimit: task.storedBytesLimit ?? null,
    concurrencyKey:
      task.concurrency === undefined
        ? null
        : sealing.concurrencyKey(sealed, task.concurrency.key, task.concurrency.derived === true),
    concurrencyLimit: task.concurrency?.limit ?? null,
    concurrencyHold: task.concurrency?.hold === 'task' ? 'task' : null,
    rateKey:
      task.rateLimit === undefined
        ? null
        : sealing.concurrencyKey(
            sealed,
            task.rateLimit.key,
            task.rateLimit.derived === true,
            'a rate limit key',
          ),
    rateLimit: task.rateLimit?.limit ?? null,
    ratePeriodMs: task.rateLimit?.periodMs ?? null,
    priority: task.priority ?? 0,
    debounceKey:
      task.debounce === undefined
        ? null
        : sealing.concurrencyKey(sealed, task.debounce.key, task.debounce.derived === true, 'a debounce key'),
    wakeAt: task.debounce === undefined ? null : task.createdAt + task.debounce.periodMs,
    traceParent: task.trace?.traceParent ?? null,
    traceState: task.trace?.traceState ?? null,
    parentId: task.parent?.id ?? null,
    detached: task.parent?.detached === true,
  };
}
