// Sessions of the 2025-11-25 wire in the SQLite file, shared by every process on it: the statements (the rules are
// core/sessions.ts).
import type { SessionStore } from '../../tasks/sessions.js';
import type { SqliteDatabase } from './database.js';
import { guarded } from './guarded.js';
import {
  createSessionStore,
  type AnsweredRow,
  type RequestStatements,
  type SessionRow,
} from '../core/sessions.js';
import type { PayloadSealing } from '../payload-sealing.js';

/** With a cipher in `sealing`, session state and relayed answers are sealed, each bound to its row. */
export function createSqliteSessionStore(db: SqliteDatabase, sealing?: PayloadSealing): SessionStore {
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
  return createSessionStore(
    {
      insert(r, state) {
        guarded(() => insert.run(r.id, r.owner.tenant, r.owner.principal, state, r.createdAt, r.expiresAt));
      },
      select: (id, owner) =>
        guarded(() => select.get(id, owner.tenant, owner.principal) as SessionRow | undefined),
      update: (id, owner, state, expiresAt, now) =>
        guarded(() => setState.run(state, expiresAt, id, owner.tenant, owner.principal, now)).changes === 1,
      count: (owner, now) => guarded(() => count.get(owner.tenant, owner.principal, now) as number),
      end: (id, owner, now) =>
        guarded(() => end.run(now, id, owner.tenant, owner.principal, now)).changes === 1,
      purgeRequests(before) {
        guarded(() => purgeRequests.run(before));
      },
      purge: (before) => guarded(() => purge.run(before)).changes,
      requests: requestStatements(db),
    },
    sealing,
  );
}

function requestStatements(db: SqliteDatabase): RequestStatements {
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
    open(sessionId, requestId, origin, now) {
      guarded(() => open.run(sessionId, requestId, origin, now));
    },
    answer: (sessionId, requestId, kept) =>
      guarded(() => answer.run(kept, sessionId, requestId)).changes === 1,
    answered: (origin) => guarded(() => answered.all(origin) as AnsweredRow[]),
    close(sessionId, requestId) {
      guarded(() => close.run(sessionId, requestId));
    },
  };
}
