// Sessions of the 2025-11-25 wire in the SQLite file, shared by every process on it.
import type { PendingRequestStore, SessionRecord, SessionStore } from '../../tasks/sessions.js';
import type { JsonObject } from '../../tasks/task.js';
import type { SqliteDatabase } from './database.js';
import { guarded } from './guarded.js';
import {
  createPayloadSealing,
  openJson,
  sealedAt,
  sealJson,
  type Opener,
  type PayloadSealing,
} from '../payload-sealing.js';

interface SessionRow {
  id: string;
  tenant: string;
  principal: string;
  state: string;
  created_at: number;
  expires_at: number;
}

const toRecord = (row: SessionRow, open: Opener): SessionRecord => ({
  id: row.id,
  owner: { tenant: row.tenant, principal: row.principal },
  state: openJson<JsonObject>(row.state, sealedAt('sessions.state', row.id), open),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/** With a cipher in `sealing`, session state and relayed answers are sealed, each bound to its row. */
export function createSqliteSessionStore(
  db: SqliteDatabase,
  sealing: PayloadSealing = createPayloadSealing({}),
): SessionStore {
  const seal = (at: string, value: unknown): string => sealJson(sealing, sealing.enabled, at, value);
  const insert = db.prepare(
    `INSERT INTO sessions (id, tenant, principal, state, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const select = db.prepare(`SELECT * FROM sessions WHERE id = ? AND tenant = ? AND principal = ?`);
  const setState = db.prepare(
    `UPDATE sessions SET state = coalesce(?, state), expires_at = coalesce(?, expires_at)
     WHERE id = ? AND tenant = ? AND principal = ? AND expires_at > ?`,
  );
  const end = db.prepare(
    `UPDATE sessions SET expires_at = ? WHERE id = ? AND tenant = ? AND principal = ? AND expires_at > ?`,
  );
  const count = db
    .prepare(`SELECT count(*) FROM sessions WHERE tenant = ? AND principal = ? AND expires_at > ?`)
    .pluck();
  const purge = db.prepare(`DELETE FROM sessions WHERE expires_at <= ?`);
  const purgeRequests = db.prepare(`DELETE FROM session_requests WHERE opened_at <= ?`);
  return {
    requests: createSqliteRequestStore(db, sealing),
    async createSession(r) {
      guarded(() =>
        insert.run(
          r.id,
          r.owner.tenant,
          r.owner.principal,
          seal(sealedAt('sessions.state', r.id), r.state),
          r.createdAt,
          r.expiresAt,
        ),
      );
    },
    async getSession(id, owner) {
      const row = guarded(() => select.get(id, owner.tenant, owner.principal) as SessionRow | undefined);
      return row === undefined ? undefined : toRecord(row, sealing.open);
    },
    async updateSession(id, owner, changes, now) {
      const state = changes.state === undefined ? null : seal(sealedAt('sessions.state', id), changes.state);
      const expiresAt = changes.expiresAt ?? null;
      const info = guarded(() => setState.run(state, expiresAt, id, owner.tenant, owner.principal, now));
      return info.changes === 1;
    },
    async countSessions(owner, now) {
      return guarded(() => count.get(owner.tenant, owner.principal, now) as number);
    },
    async endSession(id, owner, now) {
      return guarded(() => end.run(now, id, owner.tenant, owner.principal, now)).changes === 1;
    },
    async purgeSessions(before) {
      guarded(() => purgeRequests.run(before));
      return guarded(() => purge.run(before)).changes;
    },
  };
}

function createSqliteRequestStore(db: SqliteDatabase, sealing: PayloadSealing): PendingRequestStore {
  const at = (sessionId: string, requestId: string): string =>
    sealedAt('session_requests.answer', sessionId, requestId);
  const open = db.prepare(
    `INSERT INTO session_requests (session_id, request_id, origin, opened_at) VALUES (?, ?, ?, ?)`,
  );
  const answer = db.prepare(
    `UPDATE session_requests SET answer = ? WHERE session_id = ? AND request_id = ? AND answer IS NULL`,
  );
  const answered = db.prepare(
    `SELECT session_id, request_id, answer FROM session_requests WHERE origin = ? AND answer IS NOT NULL`,
  );
  const close = db.prepare(`DELETE FROM session_requests WHERE session_id = ? AND request_id = ?`);
  return {
    async openRequest(sessionId, requestId, origin, now) {
      guarded(() => open.run(sessionId, requestId, origin, now));
    },
    async answerRequest(sessionId, requestId, message) {
      const kept = sealJson(sealing, sealing.enabled, at(sessionId, requestId), message);
      return guarded(() => answer.run(kept, sessionId, requestId)).changes === 1;
    },
    async answersFor(origin) {
      const rows = guarded(
        () => answered.all(origin) as { session_id: string; request_id: string; answer: string }[],
      );
      return rows.map((r) => ({
        sessionId: r.session_id,
        requestId: r.request_id,
        message: openJson<JsonObject>(r.answer, at(r.session_id, r.request_id), sealing.open),
      }));
    },
    async closeRequest(sessionId, requestId) {
      guarded(() => close.run(sessionId, requestId));
    },
  };
}
