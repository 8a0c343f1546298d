// Legacy (2025-11-25) sessions: what `initialize` negotiated, bound to the caller, kept in a SessionStore so that
// any replica on the same store can serve them.
import { randomBytes } from 'node:crypto';
import type { AuthInfo } from '../protocol/context.js';
import type { SessionRecord, SessionStore } from '../tasks/sessions.js';
import { ownerOf } from '../tasks/task.js';
import type { ClientCapabilities, Implementation } from '../wire/envelope.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { LOG_LEVELS, type LogLevel } from '../wire/meta-keys.js';

export interface LegacySession {
  id: string;
  protocolVersion: string;
  clientCapabilities: ClientCapabilities;
  clientInfo: Implementation | undefined;
  /** Set by logging/setLevel; notifications/message below it are not sent. */
  logLevel: LogLevel | undefined;
  /** Resources the client subscribed to; their updates go to the session's GET streams. */
  subscriptions: string[];
}

export type SessionLookup =
  { kind: 'live'; session: LegacySession } | { kind: 'ended' } | { kind: 'unknown' };

export interface SessionRegistry {
  create(fields: Omit<LegacySession, 'id'>, owner: AuthInfo, now: number): Promise<LegacySession>;
  /** The caller's session: live (its idle expiry extended), ended (expired or deleted), or unknown. */
  lookup(id: string, owner: AuthInfo, now: number): Promise<SessionLookup>;
  /** Stores what a request changed (log level, subscriptions); false when the session is no longer live. */
  save(session: LegacySession, owner: AuthInfo, now: number): Promise<boolean>;
  end(id: string, owner: AuthInfo, now: number): Promise<boolean>;
}

export const MAX_SUBSCRIPTIONS = 64;
/** How long ended sessions stay known, so that their clients get 404 and start over. */
const ENDED_MEMORY_MS = 24 * 3_600_000;
const PURGE_EVERY_MS = 60_000;

function toState(s: LegacySession): Record<string, unknown> {
  const state: Record<string, unknown> = {
    protocolVersion: s.protocolVersion,
    clientCapabilities: s.clientCapabilities,
    subscriptions: s.subscriptions,
  };
  if (s.clientInfo !== undefined) state.clientInfo = s.clientInfo;
  if (s.logLevel !== undefined) state.logLevel = s.logLevel;
  return state;
}

function fromRecord(r: SessionRecord): LegacySession {
  const { state } = r;
  const subscriptions = Array.isArray(state.subscriptions) ? state.subscriptions : [];
  return {
    id: r.id,
    protocolVersion: typeof state.protocolVersion === 'string' ? state.protocolVersion : '2025-11-25',
    clientCapabilities: (isJsonObject(state.clientCapabilities)
      ? state.clientCapabilities
      : {}) as ClientCapabilities,
    clientInfo: isJsonObject(state.clientInfo) ? (state.clientInfo as unknown as Implementation) : undefined,
    logLevel: (LOG_LEVELS as readonly unknown[]).includes(state.logLevel)
      ? (state.logLevel as LogLevel)
      : undefined,
    subscriptions: subscriptions.filter((u): u is string => typeof u === 'string'),
  };
}

/** Sessions end after `idleMs` without a request (default one hour). */
export function createSessionRegistry(store: SessionStore, idleMs = 3_600_000): SessionRegistry {
  // Extending the expiry is a write: done at most once per `touchMs` of a session's life.
  const touchMs = Math.min(60_000, Math.floor(idleMs / 10));
  let lastPurge = 0;
  const purgeNow = (now: number): void => {
    if (now - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = now;
    store.purgeSessions(now - ENDED_MEMORY_MS).catch(() => undefined);
  };
  return {
    async create(fields, owner, now) {
      purgeNow(now);
      const session: LegacySession = { ...fields, id: randomBytes(24).toString('base64url') };
      await store.createSession({
        id: session.id,
        owner: ownerOf(owner),
        state: toState(session),
        createdAt: now,
        expiresAt: now + idleMs,
      });
      return session;
    },
    async lookup(id, owner, now) {
      const record = await store.getSession(id, ownerOf(owner));
      if (record === undefined) return { kind: 'unknown' };
      if (record.expiresAt <= now) return { kind: 'ended' };
      if (record.expiresAt - now < idleMs - touchMs) {
        await store.updateSession(id, ownerOf(owner), { expiresAt: now + idleMs }, now);
      }
      return { kind: 'live', session: fromRecord(record) };
    },
    save: (session, owner, now) =>
      store.updateSession(session.id, ownerOf(owner), { state: toState(session) }, now),
    end: (id, owner, now) => store.endSession(id, ownerOf(owner), now),
  };
}
