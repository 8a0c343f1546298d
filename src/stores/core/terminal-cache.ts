// Finished tasks remembered in memory: a terminal snapshot never changes again (but for an operator's purge, which
// the store's change feed announces), so polls of finished tasks are answered from memory until expiry. Bounded by
// count and by bytes: a task whose snapshot is large (its result) is read from the store each time instead.
import type { TaskOwner, TaskSnapshot } from '../../tasks/task.js';

/** Finished tasks remembered at most. */
export const CACHED_TASKS = 10_000;
/** About the bytes the remembered snapshots hold together at most, and one of them. */
export const CACHED_BYTES = 32 * 1024 * 1024;
export const CACHED_TASK_BYTES = 256 * 1024;

export interface TerminalCache {
  /** The owner's finished task as remembered, unless it has expired by `now`. */
  get(id: string, owner: TaskOwner, now: number): TaskSnapshot | undefined;
  /** Remembers a finished task (not one larger than CACHED_TASK_BYTES), letting go of the oldest past the bounds. */
  remember(owner: TaskOwner, snapshot: TaskSnapshot): void;
  /** Lets go of the tasks expired by `now` (the ones a purge may remove). */
  forgetExpired(now: number): void;
  /** Lets go of one task (changed: an operator retried or purged it, here or in another process). */
  forget(id: string): void;
  /** Lets go of every task (changes may have gone unheard). */
  clear(): void;
}

/**
 * About the bytes `value` holds in memory (two per UTF-16 unit of its strings and keys, eight per number, a few
 * per object), or undefined once that is more than `cap`: a large value is not walked to its end.
 */
export function sizeAtMost(value: unknown, cap: number): number | undefined {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += 2 * v.length + 8;
    else if (v === null || typeof v !== 'object') size += 8;
    else if (Array.isArray(v)) {
      size += 16;
      for (const item of v) {
        size += 8;
        if (size > cap) return undefined;
        stack.push(item);
      }
    } else {
      size += 16;
      for (const key in v) {
        size += 2 * key.length + 8;
        if (size > cap) return undefined;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
    if (size > cap) return undefined;
  }
  return size;
}

interface Entry {
  tenant: string;
  principal: string;
  snapshot: TaskSnapshot;
  expiresAt: number | null;
  bytes: number;
}

export function createTerminalCache(
  limits: { tasks?: number; bytes?: number; taskBytes?: number } = {},
): TerminalCache {
  const maxTasks = limits.tasks ?? CACHED_TASKS;
  const maxBytes = limits.bytes ?? CACHED_BYTES;
  const maxTaskBytes = Math.min(limits.taskBytes ?? CACHED_TASK_BYTES, maxBytes);
  const terminal = new Map<string, Entry>();
  let bytes = 0;
  const drop = (id: string): void => {
    const entry = terminal.get(id);
    if (entry === undefined) return;
    terminal.delete(id);
    bytes -= entry.bytes;
  };
  return {
    get(id, owner, now) {
      const hit = terminal.get(id);
      if (hit === undefined || hit.tenant !== owner.tenant || hit.principal !== owner.principal)
        return undefined;
      if (hit.expiresAt === null || hit.expiresAt > now) return hit.snapshot;
      drop(id);
      return undefined;
    },
    remember(owner, snapshot) {
      const size = sizeAtMost(snapshot, maxTaskBytes);
      drop(snapshot.id);
      if (size === undefined) return;
      // Oldest first (a Map keeps insertion order).
      for (const oldest of terminal.keys()) {
        if (terminal.size < maxTasks && bytes + size <= maxBytes) break;
        drop(oldest);
      }
      const expiresAt = snapshot.ttlMs === null ? null : snapshot.createdAt + snapshot.ttlMs;
      terminal.set(snapshot.id, {
        tenant: owner.tenant,
        principal: owner.principal,
        snapshot,
        expiresAt,
        bytes: size,
      });
      bytes += size;
    },
    forget: drop,
    clear() {
      terminal.clear();
      bytes = 0;
    },
    forgetExpired(now) {
      for (const [id, entry] of terminal) {
        if (entry.expiresAt !== null && entry.expiresAt <= now) drop(id);
      }
    },
  };
}
