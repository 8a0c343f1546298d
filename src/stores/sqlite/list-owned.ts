// One owner's tasks page by page, in creation order (keyset pagination on (created_at, id)).
import type { TaskPage } from '../../tasks/store.js';
import type { TaskOwner, TaskSnapshot } from '../../tasks/task.js';
import type { SqliteDatabase } from './database.js';
import { guarded } from './guarded.js';
import type { TaskRow } from './rows.js';
import { toSnapshot } from '../core/rows.js';
import type { Opener } from '../payload-sealing.js';

export function createOwnedLister(db: SqliteDatabase, open: Opener) {
  const first = db.prepare(
    `SELECT * FROM tasks WHERE tenant = ? AND principal = ? AND (expires_at IS NULL OR expires_at > ?)
     ORDER BY created_at, id LIMIT ?`,
  );
  const after = db.prepare(
    `SELECT * FROM tasks WHERE tenant = ? AND principal = ? AND (expires_at IS NULL OR expires_at > ?)
       AND (created_at > ? OR (created_at = ? AND id > ?))
     ORDER BY created_at, id LIMIT ?`,
  );
  return async (owner: TaskOwner, page: TaskPage, now: number): Promise<TaskSnapshot[]> => {
    const limit = Math.max(1, Math.min(1_000, Math.floor(page.limit)));
    const rows = guarded(() =>
      page.after === undefined
        ? first.all(owner.tenant, owner.principal, now, limit)
        : after.all(
            owner.tenant,
            owner.principal,
            now,
            page.after.createdAt,
            page.after.createdAt,
            page.after.id,
            limit,
          ),
    ) as TaskRow[];
    return rows.map((row) => toSnapshot(row, [], open));
  };
}
