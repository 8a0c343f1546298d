// A SessionStore in this process's memory, for task stores without durable sessions (one replica only).
import type { SessionRecord, SessionStore } from '../tasks/sessions.js';
import type { TaskOwner } from '../tasks/task.js';

const sameOwner = (a: TaskOwner, b: TaskOwner): boolean =>
  a.tenant === b.tenant && a.principal === b.principal;

/** At most `max` sessions, live or ended; the oldest is forgotten first when full. */
export function createMemorySessionStore(max = 10_000): SessionStore {
  const sessions = new Map<string, SessionRecord>();
  const owned = (id: string, owner: TaskOwner): SessionRecord | undefined => {
    const record = sessions.get(id);
    return record !== undefined && sameOwner(record.owner, owner) ? record : undefined;
  };
  return {
    async createSession(record) {
      if (sessions.size >= max) sessions.delete(sessions.keys().next().value as string);
      sessions.set(record.id, structuredClone(record));
    },
    async getSession(id, owner) {
      const record = owned(id, owner);
      return record === undefined ? undefined : structuredClone(record);
    },
    async updateSession(id, owner, changes, now) {
      const record = owned(id, owner);
      if (record === undefined || record.expiresAt <= now) return false;
      if (changes.state !== undefined) record.state = structuredClone(changes.state);
      if (changes.expiresAt !== undefined) record.expiresAt = changes.expiresAt;
      return true;
    },
    async countSessions(owner, now) {
      let n = 0;
      for (const record of sessions.values())
        if (record.expiresAt > now && sameOwner(record.owner, owner)) n++;
      return n;
    },
    async endSession(id, owner, now) {
      const record = owned(id, owner);
      if (record === undefined || record.expiresAt <= now) return false;
      record.expiresAt = now;
      return true;
    },
    async purgeSessions(before) {
      let n = 0;
      for (const [id, record] of sessions) {
        if (record.expiresAt <= before && sessions.delete(id)) n++;
      }
      return n;
    },
  };
}
