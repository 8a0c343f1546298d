// The SessionStore port: durable sessions of the 2025-11-25 wire, so that any replica can serve any session.
import type { JsonObject, TaskOwner } from './task.js';

export interface SessionRecord {
  id: string;
  owner: TaskOwner;
  /** What the session negotiated and later changed (opaque JSON owned by the legacy adapter). */
  state: JsonObject;
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
    changes: { state?: JsonObject; expiresAt?: number },
    now: number,
  ): Promise<boolean>;
  /** How many live sessions (expiring after `now`) the owner has: the per-principal session cap counts them. */
  countSessions(owner: TaskOwner, now: number): Promise<number>;
  /** Ends the owner's live session at `now`; false when none was live. */
  endSession(id: string, owner: TaskOwner, now: number): Promise<boolean>;
  /**
   * Forgets sessions that expired or ended at or before `before`, and server→client requests opened at or before
   * it that were never closed; returns how many sessions.
   */
  purgeSessions(before: number): Promise<number>;
  /** Server→client requests open on sessions, answerable through any replica (stores shared by replicas). */
  readonly requests?: PendingRequestStore;
}

/** A client's answer to a server→client request, kept for the replica that asked. */
export interface RequestAnswer {
  sessionId: string;
  requestId: string;
  /** The JSON-RPC response the client POSTed (with `result` or `error`). */
  message: JsonObject;
}

/**
 * Server→client requests (sampling, elicitation, roots) waiting for the client's answer. The client POSTs its
 * answer on its session, to whichever replica the load balancer picks; that replica keeps it here, and the replica
 * that asked (`origin`) collects it.
 */
export interface PendingRequestStore {
  /** Opens request `requestId` of the session, asked by `origin`. */
  openRequest(sessionId: string, requestId: string, origin: string, now: number): Promise<void>;
  /** Keeps the answer to an open request; false when no such request is open or it already has an answer. */
  answerRequest(sessionId: string, requestId: string, message: JsonObject): Promise<boolean>;
  /** The answers kept for the open requests `origin` asked. */
  answersFor(origin: string): Promise<RequestAnswer[]>;
  /** Closes a request, answered or not. */
  closeRequest(sessionId: string, requestId: string): Promise<void>;
}
