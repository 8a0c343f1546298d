// One owner's tasks page by page, in creation order (keyset pagination on (created_at, id)).
import type { TaskPage } from '../../tasks/store.js';
import type { TaskOwner, TaskSnapshot } from '../../tasks/task.js';
import type { Db } from './db.js';
import { toSnapshot, type TaskRow } from './rows.js';
import type { Opener } from '../payload-sealing.js';

/** `s` is the quoted schema name. */
export function createOwnedLister(db: Db, s: string, open: Opener) {
  const sql = `
    SELECT * FROM ${s}.tasks
    WHERE tenant = $1 AND principal = $2 AND (expires_at IS NULL OR expires_at > $3)
      AND ($4::bigint IS NULL OR (created_at, id) > ($4::bigint, $5::text))
    ORDER BY created_at, id
    LIMIT $6`;
  return async (owner: TaskOwner, page: TaskPage, now: number): Promise<TaskSnapshot[]> => {
    const limit = Math.max(1, Math.min(1_000, Math.floor(page.limit)));
    const rows = await db.query<TaskRow>(sql, [
      owner.tenant,
      owner.principal,
      now,
      page.after?.createdAt ?? null,
      page.after?.id ?? null,
      limit,
    ]);
    return rows.map((row) => toSnapshot(row, open));
  };
}
