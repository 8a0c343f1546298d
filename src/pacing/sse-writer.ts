// Server-sent events onto an HTTP response: the frames, a comment every keep-alive interval so that proxies and
// balancers see the stream alive, and what the reader has not taken yet (back-pressure). Written against the few
// members of node:http's ServerResponse it uses, so that the MCP endpoint and the operator API share it.

/** What of a response the writer uses (a node:http `ServerResponse` has all of it). */
export interface SseTarget {
  write(chunk: string | Uint8Array): boolean;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  /** Bytes written and not yet taken by the reader (the response's and its socket's buffers). */
  readonly writableLength: number;
  readonly writableNeedDrain: boolean;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** The fields of one event; `data` is sent one `data:` line per line of it. */
export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  /** How long a client waits before it reconnects (ms). */
  retry?: number;
}

const dataLine = (line: string): string => (line === '' ? 'data:\n' : `data: ${line}\n`);

/** One event as it goes on the wire, ending with its blank line. */
export function sseFrame({ id, event, data, retry }: SseEvent): string {
  let frame = id === undefined ? '' : `id: ${id}\n`;
  if (event !== undefined) frame += `event: ${event}\n`;
  // One line, as JSON always is, without splitting it.
  if (data !== undefined && !data.includes('\n')) frame += dataLine(data);
  else if (data !== undefined) for (const line of data.split('\n')) frame += dataLine(line);
  if (retry !== undefined) frame += `retry: ${Math.round(retry)}\n`;
  return `${frame}\n`;
}

/** A comment: ignored by readers, but bytes on the connection. */
export const sseComment = (text: string): string => `: ${text}\n\n`;

const KEEP_ALIVE = sseComment('keep-alive');

export interface SseWriterOptions {
  /** More than this written and not yet read (bytes) calls `onOverflow` (default: no bound). */
  maxUnreadBytes?: number;
  /** The reader is too slow: called after the write that passed `maxUnreadBytes`. */
  onOverflow?: () => void;
}

/**
 * The writers that send keep-alives, by interval: one timer per interval for all of them, not one per stream (an open
 * stream then holds no timer of its own). A writer's first comment comes within one interval of its start.
 */
const sweeps = new Map<number, { timer: ReturnType<typeof setInterval>; writers: Set<SseWriter> }>();

function joinSweep(ms: number, writer: SseWriter): void {
  let sweep = sweeps.get(ms);
  if (sweep === undefined) {
    const writers = new Set<SseWriter>();
    const timer = setInterval(() => {
      // A writer whose response ended without stop() leaves the sweep here.
      for (const w of writers)
        if (w.open) w.write(KEEP_ALIVE);
        else leaveSweep(ms, w);
    }, ms);
    timer.unref();
    sweep = { timer, writers };
    sweeps.set(ms, sweep);
  }
  sweep.writers.add(writer);
}

function leaveSweep(ms: number, writer: SseWriter): void {
  const sweep = sweeps.get(ms);
  if (sweep === undefined || !sweep.writers.delete(writer) || sweep.writers.size > 0) return;
  clearInterval(sweep.timer);
  sweeps.delete(ms);
}

/** The options of a writer given none: one object for all of them. */
const NO_OPTIONS: SseWriterOptions = Object.freeze({});

/** Writes the frames of one event stream; the caller writes the response's head and ends it. */
export class SseWriter {
  /** The keep-alive interval this writer's comments go out at (0: none). */
  private keepAliveMs = 0;

  constructor(
    private readonly target: SseTarget,
    private readonly options: SseWriterOptions = NO_OPTIONS,
  ) {}

  /** Whether the response still takes bytes. */
  get open(): boolean {
    return !this.target.writableEnded && !this.target.destroyed;
  }

  /** Whether more than `maxUnreadBytes` waits for the reader. */
  get overflowing(): boolean {
    const max = this.options.maxUnreadBytes;
    return max !== undefined && this.target.writableLength > max;
  }

  /** Writes a frame while the response is open (nothing once it ended). */
  write(frame: string | Uint8Array): void {
    if (!this.open) return;
    this.target.write(frame);
    if (this.overflowing) this.options.onOverflow?.();
  }

  /**
   * A keep-alive comment every `ms` while the response is open, the first within `ms` from now (none for 0); it
   * holds no process open.
   */
  keepAlive(ms: number): void {
    this.stop();
    if (ms <= 0) return;
    this.keepAliveMs = ms;
    joinSweep(ms, this);
  }

  /** Stops the keep-alives. */
  stop(): void {
    if (this.keepAliveMs === 0) return;
    leaveSweep(this.keepAliveMs, this);
    this.keepAliveMs = 0;
  }

  /**
   * Resolves once the reader took what waits (at once when nothing does), or the response closed. Either way both
   * listeners go: a long stream that waits for its reader many times keeps none of them.
   */
  writable(): Promise<void> {
    const target = this.target;
    return target.writableNeedDrain && this.open
      ? new Promise<void>((resolve) => {
          const done = (): void => {
            target.off('drain', done);
            target.off('close', done);
            resolve();
          };
          target.on('drain', done);
          target.on('close', done);
        })
      : Promise.resolve();
  }
}
