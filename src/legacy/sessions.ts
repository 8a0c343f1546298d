// Legacy (2025-11-25) sessions: what `initialize` negotiated, bound to the caller, kept in a SessionStore so that
// any replica on the same store can serve them.
import { randomBytes } from 'node:crypto';
import type { AuthInfo } from '../protocol/tool-types.js';
import type { SessionRecord, SessionStore } from '../tasks/sessions.js';
import { ownerOf } from '../tasks/task.js';
import type { ClientCapabilities, Implementation } from '../wire/envelope.js';
import { isJsonObject } from '../wire/jsonrpc.js';
import { ErrorCode } from '../wire/codes.js';
import { LOG_LEVELS, type LogLevel } from '../wire/meta-keys.js';
import { ProtocolError } from '../wire/protocol-error.js';

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

/**
 * Runs `fn` after every earlier call of the same key has settled: one principal's session creations in this process
 * count and insert one at a time, so the cap holds here (across replicas, it may be passed by one per replica).
 */
function serialByKey() {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const before = tails.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

export interface SessionLimits {
  /** Sessions end after this long without a request (default one hour). */
  idleMs?: number;
  /** Live sessions per principal; `initialize` beyond it is 429 (default 1000; 0 disables). */
  maxPerPrincipal?: number;
}

export function createSessionRegistry(store: SessionStore, limits: SessionLimits = {}): SessionRegistry {
  const { idleMs = 3_600_000, maxPerPrincipal = 1_000 } = limits;
  const serial = serialByKey();
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
      const record = {
        id: session.id,
        owner: ownerOf(owner),
        state: toState(session),
        createdAt: now,
        expiresAt: now + idleMs,
      };
      if (maxPerPrincipal <= 0) await store.createSession(record);
      else
        await serial(JSON.stringify([record.owner.tenant, record.owner.principal]), async () => {
          if ((await store.countSessions(record.owner, now)) >= maxPerPrincipal)
            throw new ProtocolError(
              ErrorCode.TooManyRequests,
              `Too many open sessions (limit ${maxPerPrincipal}); end unused ones with DELETE`,
              { limit: maxPerPrincipal, quota: 'sessions' },
            );
          await store.createSession(record);
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
