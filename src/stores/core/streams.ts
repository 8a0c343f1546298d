// What both stores share of the streams of partial results (TaskStreamsPort): where a chunk is sealed, the room a
// task's streams have left, and a page of rows cut to its byte bound and opened.
import type { StreamBounds, StreamChunk, StreamPage } from '../../tasks/store.js';
import { sealedAt, type Opener } from '../payload-sealing.js';

/** Where chunk `key` of stream `stream` of task `id` is sealed (payload-sealing.ts). */
export const chunkPlace = (id: string, stream: string, key: string): string =>
  sealedAt('task_stream_chunks.data', id, `${stream}\u0000${key}`);

/** The bound a chunk of `adding` bytes would pass, for a task whose streams hold `held`; undefined: it fits. */
export function boundPassed(
  held: { chunks: number; bytes: number },
  adding: number,
  bounds: StreamBounds,
): 'chunks' | 'bytes' | undefined {
  if (held.chunks + 1 > bounds.maxChunks) return 'chunks';
  if (held.bytes + adding > bounds.maxBytes) return 'bytes';
  return undefined;
}

/** A chunk row as both stores read it (numbers may come back as strings from PostgreSQL's bigint). */
export interface ChunkRow {
  seq: number | string;
  key: string;
  data: string;
  bytes: number | string;
  at: number | string;
}

/**
 * The page of rows (read in offset order, as many as the count bound allows): cut before the chunk that would pass
 * `maxBytes`, keeping the first whatever its size, and opened.
 */
export function pageOf(
  id: string,
  stream: string,
  rows: readonly ChunkRow[],
  length: number,
  maxBytes: number,
  open: Opener,
): StreamPage {
  const chunks: StreamChunk[] = [];
  let bytes = 0;
  for (const row of rows) {
    bytes += Number(row.bytes);
    if (chunks.length > 0 && bytes > maxBytes) break;
    const data = JSON.parse(open(row.data, chunkPlace(id, stream, row.key))) as string;
    chunks.push({ seq: Number(row.seq), data, at: Number(row.at) });
  }
  return { chunks, length };
}
