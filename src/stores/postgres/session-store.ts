// Sessions of the 2025-11-25 wire in PostgreSQL, shared by every replica on the schema: the statements (the rules
// are core/sessions.ts).
import type { SessionStore } from '../../tasks/sessions.js';
import type { Db } from './db.js';
import {
  createSessionStore,
  type AnsweredRow,
  type RequestStatements,
  type SessionRow,
} from '../core/sessions.js';
import type { PayloadSealing } from '../payload-sealing.js';

/**
 * `s` is the quoted schema name. With a cipher in `sealing`, session state and relayed answers are sealed, each bound
 * to its row.
 */
export function createPostgresSessionStore(db: Db, s: string, sealing?: PayloadSealing): SessionStore {
  const OWNED = `id = $1 AND tenant = $2 AND principal = $3`;
  const owned = (id: string, owner: { tenant: string; principal: string }) => [
    id,
    owner.tenant,
    owner.principal,
  ];
  return createSessionStore(
    {
      async insert(r, state) {
        await db.query(
          `INSERT INTO ${s}.sessions (id, tenant, principal, state, created_at, expires_at)
           VALUES ($1, $2, $3, $4::jsonb, $5, $6)`,
          [...owned(r.id, r.owner), state, r.createdAt, r.expiresAt],
        );
      },
      async select(id, owner) {
        const [row] = await db.query<SessionRow & Record<string, unknown>>(
          `SELECT * FROM ${s}.sessions WHERE ${OWNED}`,
          owned(id, owner),
        );
        return row;
      },
      async update(id, owner, state, expiresAt, now) {
        const rows = await db.query(
          `UPDATE ${s}.sessions SET state = coalesce($5::jsonb, state), expires_at = coalesce($6, expires_at)
           WHERE ${OWNED} AND expires_at > $4 RETURNING id`,
          [...owned(id, owner), now, state, expiresAt],
        );
        return rows.length === 1;
      },
      async count(owner, now) {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${s}.sessions WHERE tenant = $1 AND principal = $2 AND expires_at > $3`,
          [owner.tenant, owner.principal, now],
        );
        return row?.n ?? 0;
      },
      async end(id, owner, now) {
        const rows = await db.query(
          `UPDATE ${s}.sessions SET expires_at = $4 WHERE ${OWNED} AND expires_at > $4 RETURNING id`,
          [...owned(id, owner), now],
        );
        return rows.length === 1;
      },
      async purgeRequests(before) {
        await db.query(`DELETE FROM ${s}.session_requests WHERE opened_at <= $1`, [before]);
      },
      async purge(before) {
        const [row] = await db.query<{ n: number }>(
          `WITH gone AS (DELETE FROM ${s}.sessions WHERE expires_at <= $1 RETURNING 1)
           SELECT count(*)::int AS n FROM gone`,
          [before],
        );
        return row?.n ?? 0;
      },
      requests: requestStatements(db, s),
    },
    sealing,
  );
}

function requestStatements(db: Db, s: string): RequestStatements {
  return {
    async open(sessionId, requestId, origin, now) {
      await db.query(
        `INSERT INTO ${s}.session_requests (session_id, request_id, origin, opened_at) VALUES ($1, $2, $3, $4)`,
        [sessionId, requestId, origin, now],
      );
    },
    async answer(sessionId, requestId, kept) {
      const rows = await db.query(
        `UPDATE ${s}.session_requests SET answer = $3::jsonb
         WHERE session_id = $1 AND request_id = $2 AND answer IS NULL RETURNING 1`,
        [sessionId, requestId, kept],
      );
      return rows.length === 1;
    },
    answered: (origin) =>
      db.query<AnsweredRow & Record<string, unknown>>(
        `SELECT session_id, request_id, answer FROM ${s}.session_requests WHERE origin = $1 AND answer IS NOT NULL`,
        [origin],
      ),
    async close(sessionId, requestId) {
      await db.query(`DELETE FROM ${s}.session_requests WHERE session_id = $1 AND request_id = $2`, [
        sessionId,
        requestId,
      ]);
    },
  };
}
