// The SessionStore port: durable sessions of the 2025-11-25 wire, so that any replica can serve any session.
import type { JsonMap, TaskOwner } from './task.js';

export interface SessionRecord {
  id: string;
  owner: TaskOwner;
  /** What the session negotiated and later changed (opaque JSON owned by the legacy adapter). */
  state: JsonMap;
  createdAt: number;
  /** The session is live before this time: idle expiry, or the time it was ended. */
  expiresAt: number;
}

export interface SessionStore {
  /** Durably inserts a new session; resolves after commit. */
  createSession(record: SessionRecord): Promise<void>;
  /**
   * The owner's session, live or already ended (ended ones are kept until purged, so that their clients can be
   * told to start over); undefined when missing, purged or someone else's.
   */
  getSession(id: string, owner: TaskOwner): Promise<SessionRecord | undefined>;
  /** Replaces the state and/or the expiry of the owner's live session; false when there is none. */
  updateSession(
    id: string,
    owner: TaskOwner,
    changes: { state?: JsonMap; expiresAt?: number },
    now: number,
  ): Promise<boolean>;
  /** Ends the owner's live session at `now`; false when none was live. */
  endSession(id: string, owner: TaskOwner, now: number): Promise<boolean>;
  /** Forgets sessions that expired or ended at or before `before`; returns how many. */
  purgeSessions(before: number): Promise<number>;
}
