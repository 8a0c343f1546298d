// Sessions of the 2025-11-25 wire in PostgreSQL, shared by every replica on the schema.
import type { PendingRequestStore, SessionRecord, SessionStore } from '../../tasks/sessions.js';
import type { JsonObject } from '../../tasks/task.js';
import type { Db } from './db.js';
import { toNumber } from './rows.js';
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
  state: JsonObject | string;
  created_at: string | number;
  expires_at: string | number;
  [column: string]: unknown;
}

const toRecord = (row: SessionRow, open: Opener): SessionRecord => ({
  id: row.id,
  owner: { tenant: row.tenant, principal: row.principal },
  state: openJson<JsonObject>(row.state, sealedAt('sessions.state', row.id), open),
  createdAt: toNumber(row.created_at),
  expiresAt: toNumber(row.expires_at),
});

/**
 * `s` is the quoted schema name. With a cipher in `sealing`, session state and relayed answers are sealed, each bound
 * to its row.
 */
export function createPostgresSessionStore(
  db: Db,
  s: string,
  sealing: PayloadSealing = createPayloadSealing({}),
): SessionStore {
  const OWNED = `id = $1 AND tenant = $2 AND principal = $3`;
  const seal = (at: string, value: unknown): string => sealJson(sealing, sealing.enabled, at, value);
  return {
    requests: createPostgresRequestStore(db, s, sealing),
    async createSession(r) {
      await db.query(
        `INSERT INTO ${s}.sessions (id, tenant, principal, state, created_at, expires_at)
         VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
        [
          r.id,
          r.owner.tenant,
          r.owner.principal,
          seal(sealedAt('sessions.state', r.id), r.state),
          r.createdAt,
          r.expiresAt,
        ],
      );
    },
    async getSession(id, owner) {
      const [row] = await db.query<SessionRow>(`SELECT * FROM ${s}.sessions WHERE ${OWNED}`, [
        id,
        owner.tenant,
        owner.principal,
      ]);
      return row === undefined ? undefined : toRecord(row, sealing.open);
    },
    async updateSession(id, owner, changes, now) {
      const state = changes.state === undefined ? null : seal(sealedAt('sessions.state', id), changes.state);
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

function createPostgresRequestStore(db: Db, s: string, sealing: PayloadSealing): PendingRequestStore {
  const at = (sessionId: string, requestId: string): string =>
    sealedAt('session_requests.answer', sessionId, requestId);
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
        [sessionId, requestId, sealJson(sealing, sealing.enabled, at(sessionId, requestId), message)],
      );
      return rows.length === 1;
    },
    async answersFor(origin) {
      const rows = await db.query<{ session_id: string; request_id: string; answer: JsonObject | string }>(
        `SELECT session_id, request_id, answer FROM ${s}.session_requests WHERE origin = $1 AND answer IS NOT NULL`,
        [origin],
      );
      return rows.map((r) => ({
        sessionId: r.session_id,
        requestId: r.request_id,
        message: openJson<JsonObject>(r.answer, at(r.session_id, r.request_id), sealing.open),
      }));
    },
    async closeRequest(sessionId, requestId) {
      await db.query(`DELETE FROM ${s}.session_requests WHERE session_id = $1 AND request_id = $2`, [
        sessionId,
        requestId,
      ]);
    },
  };
}
