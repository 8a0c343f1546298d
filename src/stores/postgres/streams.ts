// The streams of partial results on PostgreSQL (TaskStreamsPort): an append is one statement (sql/streams.ts),
// fenced by the run's token, that finds the key, checks the task's bound and puts the chunk at the next offset.
import type { TaskStreamsPort } from '../../tasks/store.js';
import { boundPassed, chunkPlace, pageOf, type ChunkRow } from '../core/streams.js';
import { storedBytes } from '../stored-bytes.js';
import type { StoreContext } from './context.js';

type AppendRow = {
  old_seq: number | null;
  new_seq: number | null;
  chunks: number;
  bytes: string | number;
};

export function postgresStreams({ db, q, codec }: StoreContext): TaskStreamsPort {
  return {
    async append(id, token, stream, key, data, now, bounds) {
      const seal = await codec.sealerOf(id);
      const adding = storedBytes(data);
      const sealed = seal(JSON.stringify(data), chunkPlace(id, stream, key));
      const params = [id, token, stream, key, sealed, adding, now, bounds.maxChunks, bounds.maxBytes];
      const [row] = await db.query<AppendRow>(q.appendChunk, params);
      if (row === undefined) return { kind: 'lost' };
      const seq = row.old_seq ?? row.new_seq;
      if (seq !== null) return { kind: 'appended', seq };
      const held = { chunks: row.chunks, bytes: Number(row.bytes) };
      // The run appends one chunk at a time: nothing else takes the offset, so a chunk not written passed a bound.
      return { kind: 'full', bound: boundPassed(held, adding, bounds) ?? 'bytes' };
    },

    async read(id, stream, from, maxChunks, maxBytes) {
      const rows = await db.query<ChunkRow & Record<string, unknown>>(q.streamPage, [
        id,
        stream,
        from,
        maxChunks,
      ]);
      const [length] = await db.query<{ n: number }>(q.streamLength, [id, stream]);
      return pageOf(id, stream, rows, length?.n ?? 0, maxBytes, codec.open);
    },
  };
}
