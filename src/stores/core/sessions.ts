// The legacy sessions (2025-11-25 wire) as both stores keep them: what is sealed and bound to which row, how a row
// reads back, which changes count. Each dialect hands over its statements and decides nothing.
import type { PendingRequestStore, SessionRecord, SessionStore } from '../../tasks/sessions.js';
import type { JsonObject, TaskOwner } from '../../tasks/task.js';
import {
  createPayloadSealing,
  openJson,
  sealedAt,
  sealJson,
  type PayloadSealing,
} from '../payload-sealing.js';

type Maybe<T> = T | Promise<T>;

/** A row of `sessions` as a driver returns it: bigint columns may come as strings, `state` as text or JSON. */
export interface SessionRow {
  id: string;
  tenant: string;
  principal: string;
  state: JsonObject | string;
  created_at: string | number;
  expires_at: string | number;
}

/** An answered row of `session_requests`. */
export interface AnsweredRow {
  session_id: string;
  request_id: string;
  answer: JsonObject | string;
}

/** The statements of `sessions`, each run as it is (the owner's columns in every condition). */
export interface SessionStatements {
  insert(record: SessionRecord, state: string): Maybe<void>;
  select(id: string, owner: TaskOwner): Maybe<SessionRow | undefined>;
  /** Sets the state and/or the expiry (null: kept) of a session live at `now`; whether one was. */
  update(
    id: string,
    owner: TaskOwner,
    state: string | null,
    expiresAt: number | null,
    now: number,
  ): Maybe<boolean>;
  /** Sessions of the owner live at `now`. */
  count(owner: TaskOwner, now: number): Maybe<number>;
  /** Sets the expiry of a session live at `now` to `now`; whether one was. */
  end(id: string, owner: TaskOwner, now: number): Maybe<boolean>;
  /** Deletes requests opened at or before `before`. */
  purgeRequests(before: number): Maybe<void>;
  /** Deletes sessions that expired at or before `before`; how many. */
  purge(before: number): Maybe<number>;
  requests: RequestStatements;
}

/** The statements of `session_requests`. */
export interface RequestStatements {
  open(sessionId: string, requestId: string, origin: string, now: number): Maybe<void>;
  /** Sets the answer of an open, unanswered request; whether there was one. */
  answer(sessionId: string, requestId: string, answer: string): Maybe<boolean>;
  answered(origin: string): Maybe<AnsweredRow[]>;
  close(sessionId: string, requestId: string): Maybe<void>;
}

const stateAt = (id: string): string => sealedAt('sessions.state', id);
const answerAt = (sessionId: string, requestId: string): string =>
  sealedAt('session_requests.answer', sessionId, requestId);

function toRecord(row: SessionRow, sealing: PayloadSealing): SessionRecord {
  return {
    id: row.id,
    owner: { tenant: row.tenant, principal: row.principal },
    state: openJson<JsonObject>(row.state, stateAt(row.id), sealing.open),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}

function requestStore(s: RequestStatements, sealing: PayloadSealing): PendingRequestStore {
  return {
    async openRequest(sessionId, requestId, origin, now) {
      await s.open(sessionId, requestId, origin, now);
    },
    async answerRequest(sessionId, requestId, message) {
      return s.answer(
        sessionId,
        requestId,
        sealJson(sealing, sealing.enabled, answerAt(sessionId, requestId), message),
      );
    },
    async answersFor(origin) {
      return (await s.answered(origin)).map((r) => ({
        sessionId: r.session_id,
        requestId: r.request_id,
        message: openJson<JsonObject>(r.answer, answerAt(r.session_id, r.request_id), sealing.open),
      }));
    },
    async closeRequest(sessionId, requestId) {
      await s.close(sessionId, requestId);
    },
  };
}

/** With a cipher in `sealing`, session state and relayed answers are sealed, each bound to its row. */
export function createSessionStore(
  s: SessionStatements,
  sealing: PayloadSealing = createPayloadSealing({}),
): SessionStore {
  const seal = (id: string, state: JsonObject): string =>
    sealJson(sealing, sealing.enabled, stateAt(id), state);
  return {
    requests: requestStore(s.requests, sealing),
    async createSession(record) {
      await s.insert(record, seal(record.id, record.state));
    },
    async getSession(id, owner) {
      const row = await s.select(id, owner);
      return row === undefined ? undefined : toRecord(row, sealing);
    },
    async updateSession(id, owner, changes, now) {
      const state = changes.state === undefined ? null : seal(id, changes.state);
      return s.update(id, owner, state, changes.expiresAt ?? null, now);
    },
    async countSessions(owner, now) {
      return Number(await s.count(owner, now));
    },
    async endSession(id, owner, now) {
      return s.end(id, owner, now);
    },
    async purgeSessions(before) {
      await s.purgeRequests(before);
      return s.purge(before);
    },
  };
}
