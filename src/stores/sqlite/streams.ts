// The streams of partial results on SQLite (TaskStreamsPort): an append is one write transaction (fenced by the run's
// token, the key looked up, the task's bound checked, the chunk put at the next offset); a read is two statements.
import type { TaskStreamsPort } from '../../tasks/store.js';
import { boundPassed, chunkPlace, pageOf, type ChunkRow } from '../core/streams.js';
import { storedBytes } from '../stored-bytes.js';
import type { StoreContext } from './context.js';
import type { SqliteDatabase } from './database.js';

function prepareStreamStatements(db: SqliteDatabase) {
  return {
    held: db.prepare(
      `SELECT 1 FROM tasks WHERE id = ? AND attempt = ? AND status = 'working' AND lease_owner IS NOT NULL`,
    ),
    keyed: db.prepare(`SELECT seq FROM task_stream_chunks WHERE task_id = ? AND stream = ? AND key = ?`),
    room: db.prepare(
      `SELECT count(*) AS chunks, coalesce(sum(bytes), 0) AS bytes FROM task_stream_chunks WHERE task_id = ?`,
    ),
    length: db.prepare(
      `SELECT coalesce(max(seq) + 1, 0) AS n FROM task_stream_chunks WHERE task_id = ? AND stream = ?`,
    ),
    put: db.prepare(`INSERT INTO task_stream_chunks (task_id, stream, seq, key, data, bytes, at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`),
    page: db.prepare(`SELECT seq, key, data, bytes, at FROM task_stream_chunks
      WHERE task_id = ? AND stream = ? AND seq >= ? ORDER BY seq LIMIT ?`),
  };
}

export function sqliteStreams({ db, codec, writes }: StoreContext): TaskStreamsPort {
  const s = prepareStreamStatements(db);
  const lengthOf = (id: string, stream: string): number => (s.length.get(id, stream) as { n: number }).n;
  return {
    async append(id, token, stream, key, data, now, bounds) {
      const adding = storedBytes(data);
      return writes.immediate(() => {
        if (s.held.get(id, token) === undefined) return { kind: 'lost' as const };
        const old = s.keyed.get(id, stream, key) as { seq: number } | undefined;
        if (old !== undefined) return { kind: 'appended' as const, seq: old.seq };
        // Inside the write transaction, which no other writer shares: the room holds until the insert.
        const bound = boundPassed(s.room.get(id) as { chunks: number; bytes: number }, adding, bounds);
        if (bound !== undefined) return { kind: 'full' as const, bound };
        const seq = lengthOf(id, stream);
        const sealed = codec.seal(id, JSON.stringify(data), chunkPlace(id, stream, key));
        s.put.run(id, stream, seq, key, sealed, adding, now);
        return { kind: 'appended' as const, seq };
      });
    },

    async read(id, stream, from, maxChunks, maxBytes) {
      const rows = s.page.all(id, stream, from, maxChunks) as ChunkRow[];
      return pageOf(id, stream, rows, lengthOf(id, stream), maxBytes, codec.open);
    },
  };
}
