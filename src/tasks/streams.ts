// The store's port for streams of partial results (TaskStore.streams), and what it answers.

/** One chunk of a task's stream (TaskStreamsPort): its offset (0-based index in the stream), text and append time. */
export interface StreamChunk {
  seq: number;
  data: string;
  at: number;
}

/** The bounds an append checks, over all the streams of the task together. */
export interface StreamBounds {
  /** Chunks the task may keep. */
  maxChunks: number;
  /** UTF-8 bytes of chunk text the task may keep. */
  maxBytes: number;
}

/**
 * What an append did: `seq` the chunk's offset (written now, or written before under the same key: a replay);
 * `lost`: the run no longer holds the task, nothing written; `full`: the chunk would pass a bound, nothing written.
 */
export type AppendResult =
  { kind: 'appended'; seq: number } | { kind: 'lost' } | { kind: 'full'; bound: 'chunks' | 'bytes' };

/** A page of a stream: the chunks from the offset asked (at most the count and bytes asked), and its length. */
export interface StreamPage {
  chunks: StreamChunk[];
  /** How many chunks the stream holds (the offset after its last one). */
  length: number;
}

/**
 * Streams of partial results a run appends to (optional; ExecutionContext.stream). A chunk is kept under a key that
 * names it within the run's code (TaskStreamsPort.append): an append of a key the stream holds writes nothing and
 * answers the offset it has, so a replay appending again what a crashed run appended does not repeat it. Chunks are
 * deleted with their task.
 */
export interface TaskStreamsPort {
  /**
   * Appends `data` to stream `stream` of the task at the next offset, unless the stream holds `key`; fenced by the
   * run's token like saveStep. Refused (`full`) when the task's chunks, all streams together, would pass `bounds`.
   */
  append(
    id: string,
    token: number,
    stream: string,
    key: string,
    data: string,
    now: number,
    bounds: StreamBounds,
  ): Promise<AppendResult>;
  /**
   * The chunks of stream `stream` of task `id` from offset `from`: at most `maxChunks`, and no more than `maxBytes`
   * of text unless the first chunk alone is larger (it is then the only one). The caller checked the task's owner.
   */
  read(id: string, stream: string, from: number, maxChunks: number, maxBytes: number): Promise<StreamPage>;
}
