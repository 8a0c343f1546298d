// Terminal snapshots never change again (but for an operator's retry or purge, which the change log announces):
// polls of finished tasks are answered from memory until expiry.
import type { TaskOwner, TaskSnapshot } from '../../tasks/task.js';

const LIMIT = 10_000;

export interface TerminalCache {
  /** The owner's finished task as remembered, unless it has expired by `now`. */
  get(id: string, owner: TaskOwner, now: number): TaskSnapshot | undefined;
  remember(owner: TaskOwner, snapshot: TaskSnapshot): void;
  /** Lets go of the tasks expired by `now` (the ones a purge may remove). */
  forgetExpired(now: number): void;
  /** Lets go of one task (changed: an operator retried or purged it, here or in another process). */
  forget(id: string): void;
}

export function createTerminalCache(): TerminalCache {
  const terminal = new Map<
    string,
    { tenant: string; principal: string; snapshot: TaskSnapshot; expiresAt: number | null }
  >();
  return {
    get(id, owner, now) {
      const hit = terminal.get(id);
      if (hit === undefined || hit.tenant !== owner.tenant || hit.principal !== owner.principal)
        return undefined;
      if (hit.expiresAt === null || hit.expiresAt > now) return hit.snapshot;
      terminal.delete(id);
      return undefined;
    },
    remember(owner, snapshot) {
      if (terminal.size >= LIMIT) terminal.delete(terminal.keys().next().value as string);
      const expiresAt = snapshot.ttlMs === null ? null : snapshot.createdAt + snapshot.ttlMs;
      terminal.set(snapshot.id, { tenant: owner.tenant, principal: owner.principal, snapshot, expiresAt });
    },
    forget(id) {
      terminal.delete(id);
    },
    forgetExpired(now) {
      for (const [id, entry] of terminal) {
        if (entry.expiresAt !== null && entry.expiresAt <= now) terminal.delete(id);
      }
    },
  };
}
