// The response to one legacy request: a JSON body, or SSE once a notification or server request must go first
// (or at once, for a GET stream).
import type { ServerResponse } from 'node:http';

export class LegacyResponse {
  private sse = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly keepAliveMs: number,
  ) {}

  /** Switches the response to SSE now, before there is anything to send (GET streams). */
  start(): void {
    if (this.res.writableEnded || this.res.destroyed || this.sse) return;
    this.begin();
  }

  /** Ends an SSE stream that carries no final response. */
  end(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end();
  }

  /** Writes one JSON-RPC message as an SSE event, switching the response to SSE on first use. */
  send(json: string): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    if (!this.sse) this.begin();
    this.res.write(`event: message\ndata: ${json}\n\n`);
  }

  private begin(): void {
    this.sse = true;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // Headers go out now: a GET stream may have nothing to say for a long time.
    this.res.flushHeaders();
    if (this.keepAliveMs > 0) {
      this.timer = setInterval(() => this.res.write(': keep-alive\n\n'), this.keepAliveMs);
      this.timer.unref();
    }
  }

  /** The final response message: the last SSE event, or a plain JSON body. */
  finish(json: string, extraHeaders: Record<string, string> = {}): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.res.writableEnded || this.res.destroyed) return;
    if (this.sse) {
      this.send(json);
      this.res.end();
      return;
    }
    this.res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(json),
      ...extraHeaders,
    });
    this.res.end(json);
  }
}

export function sendStatus(
  res: ServerResponse,
  status: number,
  body?: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  if (body === undefined) {
    res.writeHead(status, headers).end();
    return;
  }
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}
