// Which tasks each caller created through the legacy wire, for tasks/list (the modern core has no listing).
import type { AuthInfo } from '../protocol/context.js';

export interface TaskIndex {
  add(owner: AuthInfo, taskId: string): void;
  /** The owner's task ids, oldest first. */
  list(owner: AuthInfo): readonly string[];
  forget(owner: AuthInfo, taskId: string): void;
}

/**
 * In this process's memory, bounded per owner. TODO(issue 10): a store query (`listByOwner`) would let any
 * replica list every task of the caller, including those created on other replicas.
 */
export function createMemoryTaskIndex(maxPerOwner = 1_000): TaskIndex {
  const byOwner = new Map<string, string[]>();
  const keyOf = (o: AuthInfo): string => `${o.tenant}\u0000${o.principal}`;
  return {
    add(owner, taskId) {
      const key = keyOf(owner);
      const ids = byOwner.get(key) ?? [];
      ids.push(taskId);
      if (ids.length > maxPerOwner) ids.shift();
      byOwner.set(key, ids);
    },
    list: (owner) => byOwner.get(keyOf(owner)) ?? [],
    forget(owner, taskId) {
      const ids = byOwner.get(keyOf(owner));
      const i = ids?.indexOf(taskId) ?? -1;
      if (ids !== undefined && i >= 0) ids.splice(i, 1);
    },
  };
}
