// Sessions of the 2025-11-25 wire in PostgreSQL, shared by every replica on the schema.
import type { PendingRequestStore, SessionRecord, SessionStore } from '../../tasks/sessions.js';
import type { JsonObject } from '../../tasks/task.js';
import type { Db } from './db.js';
import { toNumber } from './rows.js';

interface SessionRow {
  id: string;
  tenant: string;
  principal: string;
  state: JsonObject;
  created_at: string | number;
  expires_at: string | number;
  [column: string]: unknown;
}

const toRecord = (row: SessionRow): SessionRecord => ({
  id: row.id,
  owner: { tenant: row.tenant, principal: row.principal },
  state: row.state,
  createdAt: toNumber(row.created_at),
  expiresAt: toNumber(row.expires_at),
});

/** `s` is the quoted schema name. */
export function createPostgresSessionStore(db: Db, s: string): SessionStore {
  const OWNED = `id = $1 AND tenant = $2 AND principal = $3`;
  return {
    requests: createPostgresRequestStore(db, s),
    async createSession(r) {
      await db.query(
        `INSERT INTO ${s}.sessions (id, tenant, principal, state, created_at, expires_at)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
        [r.id, r.owner.tenant, r.owner.principal, JSON.stringify(r.state), r.createdAt, r.expiresAt],
      );
    },
    async getSession(id, owner) {
      const [row] = await db.query<SessionRow>(`SELECT * FROM ${s}.sessions WHERE ${OWNED}`, [
        id,
        owner.tenant,
        owner.principal,
      ]);
      return row === undefined ? undefined : toRecord(row);
    },
    async updateSession(id, owner, changes, now) {
      const state = changes.state === undefined ? null : JSON.stringify(changes.state);
      const rows = await db.query(
        `UPDATE ${s}.sessions SET state = coalesce($5::jsonb, state), expires_at = coalesce($6, expires_at)
         WHERE ${OWNED} AND expires_at > $4 RETURNING id`,
        [id, owner.tenant, owner.principal, now, state, changes.expiresAt ?? null],
      );
      return rows.length === 1;
    },
    async countSessions(owner, now) {
      const [row] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${s}.sessions WHERE tenant = $1 AND principal = $2 AND expires_at > $3`,
        [owner.tenant, owner.principal, now],
      );
      return Number(row?.n ?? 0);
    },
    async endSession(id, owner, now) {
      const rows = await db.query(
        `UPDATE ${s}.sessions SET expires_at = $4 WHERE ${OWNED} AND expires_at > $4 RETURNING id`,
        [id, owner.tenant, owner.principal, now],
      );
      return rows.length === 1;
    },
    async purgeSessions(before) {
      await db.query(`DELETE FROM ${s}.session_requests WHERE opened_at <= $1`, [before]);
      const [row] = await db.query<{ n: number }>(
        `WITH gone AS (DELETE FROM ${s}.sessions WHERE expires_at <= $1 RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [before],
      );
      return row?.n ?? 0;
    },
  };
}

function createPostgresRequestStore(db: Db, s: string): PendingRequestStore {
  return {
    async openRequest(sessionId, requestId, origin, now) {
      await db.query(
        `INSERT INTO ${s}.session_requests (session_id, request_id, origin, opened_at) VALUES ($1, $2, $3, $4)`,
        [sessionId, requestId, origin, now],
      );
    },
    async answerRequest(sessionId, requestId, message) {
      const rows = await db.query(
        `UPDATE ${s}.session_requests SET answer = $3::jsonb
         WHERE session_id = $1 AND request_id = $2 AND answer IS NULL RETURNING 1`,
        [sessionId, requestId, JSON.stringify(message)],
      );
      return rows.length === 1;
    },
    async answersFor(origin) {
      const rows = await db.query<{ session_id: string; request_id: string; answer: JsonObject }>(
        `SELECT session_id, request_id, answer FROM ${s}.session_requests WHERE origin = $1 AND answer IS NOT NULL`,
        [origin],
      );
      return rows.map((r) => ({ sessionId: r.session_id, requestId: r.request_id, message: r.answer }));
    },
    async closeRequest(sessionId, requestId) {
      await db.query(`DELETE FROM ${s}.session_requests WHERE session_id = $1 AND request_id = $2`, [
        sessionId,
        requestId,
      ]);
    },
  };
}
