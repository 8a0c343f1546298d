// Legacy (2025-11-25) sessions: what `initialize` negotiated, bound to the caller that created it.
import { randomBytes } from 'node:crypto';
import type { AuthInfo } from '../protocol/context.js';
import type { ClientCapabilities, Implementation } from '../wire/envelope.js';
import type { LogLevel } from '../wire/meta-keys.js';

export interface LegacySession {
  id: string;
  owner: AuthInfo;
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: Implementation | undefined;
  /** Set by logging/setLevel; notifications/message below it are not sent. */
  logLevel: LogLevel | undefined;
  lastSeen: number;
}

/**
 * Where sessions live. The in-memory registry serves one process only.
 * TODO(issue 10): back this with the TaskStore (an optional `sessions` port method and a SQLite table) so that
 * any replica can serve any session; the interface is already async for that.
 */
export interface SessionRegistry {
  create(session: Omit<LegacySession, 'id' | 'lastSeen'>, now: number): Promise<LegacySession>;
  /** The session if it exists and belongs to `owner`. */
  get(id: string, owner: AuthInfo, now: number): Promise<LegacySession | undefined>;
  /** Whether this id is or was a session (for era detection, before authentication; ended ones then get 404). */
  known(id: string): boolean;
  update(session: LegacySession): Promise<void>;
  delete(id: string, owner: AuthInfo): Promise<boolean>;
}

const sameOwner = (a: AuthInfo, b: AuthInfo): boolean => a.tenant === b.tenant && a.principal === b.principal;

/** Sessions in this process's memory, dropped after `idleMs` without a request (default one hour). */
export function createMemorySessions(idleMs = 3_600_000, max = 10_000): SessionRegistry {
  const sessions = new Map<string, LegacySession>();
  // Ended sessions are remembered (bounded) so that their clients get 404 and re-initialize.
  const ended = new Set<string>();
  const end = (id: string): boolean => {
    if (!sessions.delete(id)) return false;
    ended.add(id);
    if (ended.size > max) ended.delete(ended.values().next().value as string);
    return true;
  };
  const sweep = (now: number): void => {
    for (const [id, s] of sessions) if (now - s.lastSeen > idleMs) end(id);
  };
  return {
    async create(fields, now) {
      if (sessions.size >= max) sweep(now);
      const oldest = sessions.keys().next();
      if (sessions.size >= max && oldest.done !== true) end(oldest.value);
      const session: LegacySession = { ...fields, id: randomBytes(24).toString('base64url'), lastSeen: now };
      sessions.set(session.id, session);
      return session;
    },
    async get(id, owner, now) {
      const session = sessions.get(id);
      if (session === undefined || !sameOwner(session.owner, owner)) return undefined;
      if (now - session.lastSeen > idleMs) {
        end(id);
        return undefined;
      }
      session.lastSeen = now;
      return session;
    },
    known: (id) => sessions.has(id) || ended.has(id),
    async update(session) {
      if (sessions.has(session.id)) sessions.set(session.id, session);
    },
    async delete(id, owner) {
      const session = sessions.get(id);
      if (session === undefined || !sameOwner(session.owner, owner)) return false;
      return end(id);
    },
  };
}
