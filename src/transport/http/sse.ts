// Server-Sent Events writer for a request's response stream, with comment keep-alives.
import type { ServerResponse } from 'node:http';

export class SseStream {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    keepAliveMs: number,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    res.flushHeaders();
    if (keepAliveMs > 0) {
      this.timer = setInterval(() => this.comment('keep-alive'), keepAliveMs);
      this.timer.unref();
    }
  }

  send(json: string): void {
    if (!this.res.writableEnded) this.res.write(`event: message\ndata: ${json}\n\n`);
  }

  comment(text: string): void {
    if (!this.res.writableEnded) this.res.write(`: ${text}\n\n`);
  }

  end(json?: string): void {
    this.stop();
    if (this.res.writableEnded) return;
    if (json !== undefined) this.send(json);
    this.res.end();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
