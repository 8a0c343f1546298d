// SQL of the streams of partial results (TaskStreamsPort, ../streams.ts).
import { FENCED } from './fragments.js';

export function streamSql(s: string) {
  return {
    /**
     * $1 id, $2 token, $3 stream, $4 key, $5 data (as kept), $6 its bytes, $7 now, $8 the task's most chunks, $9 its
     * most bytes. No row: the lease is not held. `old_seq`: the key's offset (nothing written); `new_seq`: the
     * offset written; neither: a bound would be passed (`chunks`, `bytes`: what the task's streams hold).
     */
    appendChunk: `
      WITH held AS (SELECT id FROM ${s}.tasks WHERE ${FENCED} FOR SHARE),
      old AS (SELECT seq FROM ${s}.task_stream_chunks WHERE task_id = $1 AND stream = $3 AND key = $4),
      room AS (
        SELECT count(*)::int AS chunks, coalesce(sum(bytes), 0)::bigint AS bytes
        FROM ${s}.task_stream_chunks WHERE task_id = $1
      ), put AS (
        INSERT INTO ${s}.task_stream_chunks (task_id, stream, seq, key, data, bytes, at)
        SELECT held.id, $3,
          (SELECT coalesce(max(seq) + 1, 0) FROM ${s}.task_stream_chunks WHERE task_id = $1 AND stream = $3),
          $4, $5, $6::int, $7::bigint
        FROM held, room
        WHERE NOT EXISTS (SELECT 1 FROM old) AND room.chunks + 1 <= $8::int AND room.bytes + $6::int <= $9::bigint
        RETURNING seq
      )
      SELECT (SELECT seq FROM old) AS old_seq, (SELECT seq FROM put) AS new_seq, room.chunks, room.bytes
      FROM held, room`,

    /** $1 id, $2 stream, $3 the first offset, $4 the most chunks. */
    streamPage: `
      SELECT seq, key, data, bytes, at FROM ${s}.task_stream_chunks
      WHERE task_id = $1 AND stream = $2 AND seq >= $3 ORDER BY seq LIMIT $4`,

    /** $1 id, $2 stream: the offset after its last chunk. */
    streamLength: `
      SELECT coalesce(max(seq) + 1, 0)::int AS n FROM ${s}.task_stream_chunks WHERE task_id = $1 AND stream = $2`,
  };
}
