// The quotas of a creation, in the order both stores check them: the owner's unfinished then kept tasks, the same two
// for its tenant, then the bytes the owner's kept tasks store. The first one reached refuses the task.
import { ActiveLimitError, type TaskQuota } from '../../tasks/errors.js';
import type { EncodedTask } from '../encode-task.js';
import { creationBytes, overStoredBytes } from '../stored-bytes.js';

/** The quotas counted in tasks, in checking order (the byte quota comes after them). */
export const COUNTED_QUOTAS = ['active', 'stored', 'tenant-active', 'tenant-stored'] as const;
export type CountedQuota = (typeof COUNTED_QUOTAS)[number];

/** The task's limit of each quota (null: none). */
const LIMITS: Record<CountedQuota, (task: EncodedTask) => number | null> = {
  active: (t) => t.activeLimit,
  stored: (t) => t.storedLimit,
  'tenant-active': (t) => t.tenantActiveLimit,
  'tenant-stored': (t) => t.tenantStoredLimit,
};

/** Whether creating the task counts its owner's tasks (a lock and counts on PostgreSQL). */
export const ownerLimited = (t: EncodedTask): boolean => t.activeLimit !== null || t.storedLimit !== null;
/** Whether creating the task counts its tenant's tasks. */
export const tenantLimited = (t: EncodedTask): boolean =>
  t.tenantActiveLimit !== null || t.tenantStoredLimit !== null;

/**
 * What the task's owner (or tenant) holds of each quota, read only for a quota the task has a limit of. Each gives
 * tasks (or, for `stored-bytes`, bytes) held before the task; undefined: not counted here (no refusal by it).
 */
export type Held = Partial<Record<TaskQuota, () => number | undefined>>;

/** The first of the task's quotas that what its owner and tenant hold has reached, if any. */
export function creationOver(task: EncodedTask, held: Held): ActiveLimitError | undefined {
  for (const quota of COUNTED_QUOTAS) {
    const limit = LIMITS[quota](task);
    if (limit === null) continue;
    const n = held[quota]?.();
    if (n !== undefined && n >= limit) return new ActiveLimitError(limit, quota);
  }
  if (task.storedBytesLimit === null) return undefined;
  const bytes = held['stored-bytes']?.();
  return bytes === undefined ? undefined : overStoredBytes(bytes, creationBytes(task), task.storedBytesLimit);
}
