// One HTTP response of the MCP endpoint, for every wire: a JSON body (or none), or Server-Sent Events from the moment
// something must go out before the final message (a notification, a server→client request, a GET stream), with
// comment keep-alives. A response that would otherwise stay silent longer than the keep-alive interval (a long
// synchronous call) turns into an event stream then, so that no balancer's read timeout cuts it. Reported once to the
// handler's `onResponse` when its status is known.
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { sseFrame, SseWriter } from '../../pacing/sse-writer.js';

export type ResponseReport = (method: string, status: number, durationMs: number) => void;

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  connection: 'keep-alive',
} as const;

/** No extra headers: one object for every response that has none (never written to). */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** `silence` of a reply whose timer is to be armed at the end of this turn of the event loop. */
const ARMING = 'arming';

/**
 * Replies whose silence limit is armed once this turn of the event loop is over: most requests have answered by
 * then, and one shared `setImmediate` replaces a timer set and cleared for each of them.
 */
let arming: HttpReply[] = [];

function armLater(reply: HttpReply): void {
  if (arming.length === 0) setImmediate(armAll);
  arming.push(reply);
}

function armAll(): void {
  const batch = arming;
  arming = [];
  for (const reply of batch) reply.armSilence();
}

export class HttpReply {
  private sse = false;
  /** The event stream's frames and keep-alives: made when the response becomes one (most never do). */
  private events: SseWriter | undefined;
  /** Armed by `limitSilence`: switches to SSE if nothing went out within the keep-alive interval. */
  private silence: NodeJS.Timeout | typeof ARMING | undefined;
  /** What `onResponse` calls the request: the JSON-RPC method once known, the path before. */
  method: string;
  /** Called once if the client goes away before the response is finished (see `onGone`). */
  private gone: (() => void) | undefined;
  /** Whether `closed` listens for the response's close: one listener for the report and `gone`, once needed. */
  private watching = false;
  /** What `onGone` returns: made once. */
  private offGone: (() => void) | undefined;

  constructor(
    readonly res: ServerResponse,
    private readonly keepAliveMs: number,
    private report: ResponseReport | undefined,
    label: string,
    private readonly started = report === undefined ? 0 : performance.now(),
  ) {
    this.method = label;
  }

  /** Whether the response became an event stream. */
  get streaming(): boolean {
    return this.sse;
  }

  /**
   * No silent hold longer than the keep-alive interval: if no byte has gone out by then, the response becomes an
   * event stream (with its keep-alives), which clients that accept `text/event-stream` must take as well as JSON.
   */
  limitSilence(): void {
    if (this.keepAliveMs <= 0 || this.sse || this.silence !== undefined) return;
    this.silence = ARMING;
    armLater(this);
  }

  /** Arms the silence limit of `limitSilence`, unless the response went out (or was quieted) meanwhile. */
  armSilence(): void {
    if (this.silence !== ARMING) return;
    this.silence = undefined;
    if (this.sse || !this.open() || this.res.headersSent) return;
    this.silence = setTimeout(() => {
      this.silence = undefined;
      if (!this.sse && this.open() && !this.res.headersSent) this.begin();
    }, this.keepAliveMs);
  }

  /**
   * A whole response: a JSON body, or no body. Once the response became an event stream (see `limitSilence`), the
   * body goes out as its last event instead (its status is then the stream's 200); otherwise nothing happens once
   * headers went out.
   */
  json(status: number, body?: string, headers: Record<string, string> = NO_HEADERS): void {
    const res = this.res;
    if (this.sse) {
      if (body !== undefined) this.send(body);
      this.end();
      return;
    }
    this.quiet();
    if (res.headersSent) return;
    if (body === undefined) res.writeHead(status, headers).end();
    else {
      const all: Record<string, string | number> = {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      };
      for (const key in headers) all[key] = headers[key] as string;
      res.writeHead(status, all);
      res.end(body);
    }
    this.done(status);
  }

  /** Switches to SSE now, before there is anything to send (a GET stream may stay silent for long). */
  start(): void {
    if (!this.sse && this.open()) this.begin();
  }

  /** One JSON-RPC message as an SSE event (with an event id, when given), switching the response to SSE. */
  send(json: string, eventId?: string): void {
    if (!this.open()) return;
    if (!this.sse) this.begin();
    this.events!.write(sseFrame({ id: eventId, event: 'message', data: json }));
  }

  /** An event with an id and no data: where a client that reconnects with it as Last-Event-ID resumes. */
  mark(eventId: string): void {
    if (!this.open()) return;
    if (!this.sse) this.begin();
    this.events!.write(sseFrame({ id: eventId, data: '' }));
  }

  /** Ends the event stream unfinished, telling the client to reconnect after `retryMs` (the SSE `retry` field). */
  pause(retryMs: number): void {
    if (this.sse) this.events!.write(sseFrame({ retry: retryMs }));
    this.end();
  }

  /** The final message: the last SSE event, or a JSON body with this status. */
  finish(json: string, status = 200, headers: Record<string, string> = NO_HEADERS): void {
    if (!this.sse) {
      this.stop();
      this.json(status, json, headers);
      return;
    }
    this.send(json);
    this.end();
  }

  /** Ends an event stream without a final message. */
  end(): void {
    this.stop();
    if (this.open()) this.res.end();
  }

  /** Stops the keep-alives (the stream is left to whoever closes it). */
  stop(): void {
    this.quiet();
    this.events?.stop();
  }

  /** Resolves once the client took what waits to be sent (at once when nothing does), or the response closed. */
  writable(): Promise<void> {
    return this.events === undefined ? Promise.resolve() : this.events.writable();
  }

  /**
   * Calls `fn` once if the response closes before it is finished (the client went away); returns the way to stop
   * waiting, or undefined when another waits already (one waiter at a time: the caller waits some other way then).
   * It adds nothing to the response but one listener of its own, shared with the stream's report.
   */
  onGone(fn: () => void): (() => void) | undefined {
    if (this.gone !== undefined) return undefined;
    this.gone = fn;
    this.watchClose();
    return (this.offGone ??= this.forgetGone.bind(this));
  }

  private forgetGone(): void {
    this.gone = undefined;
  }

  private watchClose(): void {
    if (this.watching) return;
    this.watching = true;
    this.res.on('close', this.closed.bind(this));
  }

  /** The response closed: an event stream is reported, and a waiter told if it closed unfinished. */
  private closed(): void {
    if (this.sse) this.done(200);
    const gone = this.gone;
    this.gone = undefined;
    if (gone !== undefined && !this.res.writableFinished) gone();
  }

  private quiet(): void {
    if (this.silence === undefined) return;
    if (this.silence !== ARMING) clearTimeout(this.silence);
    this.silence = undefined;
  }

  private open(): boolean {
    // What the writer would tell (it writes only while this holds).
    return !this.res.writableEnded && !this.res.destroyed;
  }

  private begin(): void {
    this.quiet();
    this.sse = true;
    const res = this.res;
    res.writeHead(200, SSE_HEADERS);
    // Headers go out now, whatever follows and whenever.
    res.flushHeaders();
    this.events ??= new SseWriter(res);
    this.events.keepAlive(this.keepAliveMs);
    // A stream ends whenever its writer or the client ends it: reported then.
    if (this.report !== undefined) this.watchClose();
  }

  private done(status: number): void {
    const report = this.report;
    if (report === undefined) return;
    this.report = undefined;
    report(this.method, status, performance.now() - this.started);
  }
}
