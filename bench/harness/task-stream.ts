// A subscriptions/listen client over its own connection, as the push and memory rows use it.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { PUSH_TIMEOUT_MS } from '../config.js';
import { listenTasks } from './requests.js';

/** The push client's clock: CLOCK_MONOTONIC (the servers' too) as ns since this process started, in a double. */
const CLOCK_BASE = process.hrtime.bigint();
export const clockNs = (): number => Number(process.hrtime.bigint() - CLOCK_BASE);
/** A server's CLOCK_MONOTONIC reading (decimal ns, as bench/children/push-server.ts and bench/tools.mjs give it). */
export const serverNs = (ns: string): number => Number(BigInt(ns) - CLOCK_BASE);

/** The bytes that open the completed event of task `id` (DetailedTask starts with taskId, then status). */
export const completedMarker = (id: string): Buffer =>
  Buffer.from(`"taskId":${JSON.stringify(id)},"status":"completed"`);

/** Whether `buf` ends an SSE event (a blank line). */
const endsEvent = (buf: Buffer) =>
  buf.length >= 2 && buf[buf.length - 1] === 10 && buf[buf.length - 2] === 10;

/** One JSON-RPC message of a stream (only the fields the rows read). */
export interface StreamMessage {
  method?: string;
  params: {
    taskId: string;
    status: string;
    result?: { content?: Array<{ text?: string }> };
    /** The acknowledgement's: the task ids the server agreed to watch. */
    notifications?: { taskIds?: unknown };
  };
}

export interface RecordedEvent {
  msg: StreamMessage;
  at: number;
}

interface Waiter {
  pred: () => boolean;
  resolve: () => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

interface Expected {
  marker: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

/**
 * One subscriptions/listen stream over its own connection. It parses every event as it comes and keeps each task's
 * latest status (`status`, `until`) — until `record()`. From then on it only keeps the raw chunks with the clock
 * reading of their arrival, and looks for one byte pattern: the completed event `expect`ed. `recorded()` parses
 * what was kept, each event stamped with the arrival of the chunk that completed it, and goes back to parsing as
 * events come. So while events are being timed the client allocates next to nothing, and its own garbage
 * collections do not hold up the reads it times (parsing as they came, 100 streams' worth of events, had its
 * scavenges take up to 7 ms).
 */
export class TaskStream {
  readonly status = new Map<string, string>();
  /** The task ids asked for, and those the server's acknowledgement agreed to (its own live tasks only). */
  private requested: string[] = [];
  private agreed: string[] | undefined;
  private readonly waiters = new Set<Waiter>();
  private failure: Error | undefined;
  private readonly decoder = new StringDecoder('utf8');
  private text = '';
  // Recording: the chunks, their arrival (clockNs) and the completed event being waited for.
  private recording = false;
  private chunks: Buffer[] = [];
  private arrivals: number[] = [];
  private expected: Expected | undefined;
  private request: ClientRequest | undefined;

  /** Opens the stream; resolves once the server has answered with an SSE stream. */
  static open(url: string, taskIds: string[], listenId: string): Promise<TaskStream> {
    return new TaskStream().connect(url, taskIds, listenId);
  }

  private connect(url: string, taskIds: string[], listenId: string): Promise<TaskStream> {
    const req = listenTasks(taskIds, listenId);
    this.requested = taskIds;
    return new Promise((resolveStream, reject) => {
      const r = httpRequest(
        url,
        {
          method: 'POST',
          agent: false,
          headers: { ...req.headers, 'content-length': Buffer.byteLength(req.body) },
        },
        (res) => {
          if (res.statusCode !== 200 || !/^text\/event-stream/.test(res.headers['content-type'] ?? '')) {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => reject(new Error(`subscriptions/listen: HTTP ${res.statusCode}: ${body}`)));
            return;
          }
          this.attach(res);
          resolveStream(this);
        },
      );
      this.request = r;
      r.on('error', (err) => {
        this.failure ??= err;
        reject(err);
        this.check();
      });
      r.end(req.body);
    });
  }

  private attach(res: IncomingMessage): void {
    res.on('data', (chunk: Buffer) => {
      if (this.recording) {
        this.arrivals.push(clockNs());
        this.chunks.push(chunk);
        if (this.expected !== undefined && this.found(chunk)) this.settleExpected();
        return;
      }
      this.parseText(this.decoder.write(chunk));
      this.check();
    });
    const ended = () => {
      this.failure ??= new Error('push stream ended');
      this.settleExpected(this.failure);
      this.check();
    };
    res.on('end', ended);
    res.on('close', ended);
  }

  /** Parses the complete events in `text` (after appending `more`), calling `onEvent(msg)` for each. */
  private parseText(more: string, onEvent?: (msg: StreamMessage) => void): void {
    this.text += more;
    let end;
    while ((end = this.text.indexOf('\n\n')) !== -1) {
      const block = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data === '') continue;
      const msg = JSON.parse(data) as StreamMessage;
      if (msg.method === 'notifications/tasks') this.status.set(msg.params.taskId, msg.params.status);
      else if (msg.method === 'notifications/subscriptions/acknowledged') {
        const agreed = msg.params.notifications?.taskIds;
        this.agreed = Array.isArray(agreed) ? agreed.map(String) : [];
      }
      onEvent?.(msg);
    }
  }

  private check(): void {
    for (const w of this.waiters) {
      if (this.failure !== undefined) w.reject(this.failure);
      else if (w.pred()) w.resolve();
      else continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
    }
  }

  private settleExpected(err?: Error): void {
    const e = this.expected;
    if (e === undefined) return;
    this.expected = undefined;
    clearTimeout(e.timer);
    if (err === undefined) e.resolve();
    else e.reject(err);
  }

  /** Whether the expected marker is in `chunk`, or split between the previous chunk and this one. */
  private found(chunk: Buffer): boolean {
    const { marker } = this.expected!;
    if (chunk.includes(marker)) return true;
    const prev = this.chunks.length >= 2 ? this.chunks[this.chunks.length - 2] : undefined;
    if (prev === undefined || endsEvent(prev)) return false;
    const k = marker.length - 1;
    return Buffer.concat([prev.subarray(-k), chunk.subarray(0, k)]).includes(marker);
  }

  /** Resolves once `pred()` holds (checked after every event), or fails after PUSH_TIMEOUT_MS. */
  until(pred: () => boolean, what: string): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (pred()) return Promise.resolve();
    return new Promise((resolveWait, rejectWait) => {
      const w: Waiter = { pred, resolve: resolveWait, reject: rejectWait };
      w.timer = setTimeout(() => {
        this.waiters.delete(w);
        rejectWait(new Error(`push stream: no ${what} within ${PUSH_TIMEOUT_MS} ms (${this.describe()})`));
      }, PUSH_TIMEOUT_MS);
      this.waiters.add(w);
    });
  }

  /**
   * What the stream has shown: how many of the requested tasks the server acknowledged (it leaves out unknown,
   * foreign and expired ones) and the statuses seen.
   */
  private describe(): string {
    const ack =
      this.agreed === undefined
        ? 'no acknowledgement'
        : `the server acknowledged ${this.agreed.length} of ${this.requested.length} task ids`;
    const seen = new Map<string, number>();
    for (const status of this.status.values()) seen.set(status, (seen.get(status) ?? 0) + 1);
    const statuses = [...seen].map(([status, n]) => `${n} ${status}`).join(', ');
    return `${ack}; statuses seen: ${statuses === '' ? 'none' : statuses}`;
  }

  record(): void {
    this.recording = true;
  }

  /** Resolves once the event that starts with `marker` (completedMarker) has arrived. */
  expect(marker: Buffer): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolveWait, rejectWait) => {
      const expected: Expected = { marker, resolve: resolveWait, reject: rejectWait };
      this.expected = expected;
      expected.timer = setTimeout(
        () => this.settleExpected(new Error(`push stream: no completed event within ${PUSH_TIMEOUT_MS} ms`)),
        PUSH_TIMEOUT_MS,
      );
    });
  }

  /** The events received since `record()`: [{ msg, at }] in order, `at` in clockNs. */
  recorded(): RecordedEvent[] {
    this.recording = false;
    const events: RecordedEvent[] = [];
    for (let i = 0; i < this.chunks.length; i++) {
      const at = this.arrivals[i]!;
      this.parseText(this.decoder.write(this.chunks[i]!), (msg) => events.push({ msg, at }));
    }
    this.chunks = [];
    this.arrivals = [];
    this.check();
    return events;
  }

  close(): void {
    this.failure ??= new Error('push stream closed');
    this.request?.destroy();
  }
}
