// HTTP beyond the post() of test/support/http.ts: the same POST on a connection of its own (no pooling), and
// requests with other methods and paths.
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { parseBody, withDefaults, type HeaderInit, type PostResult } from '../../../test/support/http.js';

/** Like post(), over node:http on a connection of its own. */
export function postFresh(
  url: string,
  body: string | Uint8Array,
  headers: HeaderInit,
  { timeoutMs, sseTimeoutMs }: { timeoutMs: number; sseTimeoutMs: number },
): Promise<PostResult> {
  const target = new URL(url);
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(withDefaults(headers)))
    if (v !== undefined) out[k] = typeof v === 'string' ? v : [...v];
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  out['content-length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: out,
        agent: false,
      },
      (res) => {
        const contentType = String(res.headers['content-type'] ?? '');
        const chunks: Buffer[] = [];
        let truncated = false;
        const finish = (): void => {
          const text = Buffer.concat(chunks).toString('utf8');
          const h = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            h.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
          resolve({
            status: res.statusCode ?? 0,
            headers: h,
            text,
            truncated,
            contentType,
            ...parseBody(contentType, text),
          });
        };
        if (contentType.startsWith('text/event-stream')) {
          setTimeout(() => {
            truncated = !res.complete;
            res.destroy();
            finish();
          }, sseTimeoutMs);
        }
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (!contentType.startsWith('text/event-stream')) finish();
        });
        res.on('error', () => undefined);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface RawResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** Any method and path, on a fresh connection (a kept-alive socket the server just timed out would read as a hang-up). */
export function rawRequest(
  url: string,
  {
    method,
    path,
    headers,
    body,
  }: { method: string; path: string; headers: OutgoingHttpHeaders; body: string | undefined },
): Promise<RawResult> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: target.hostname, port: target.port, path, method, headers, timeout: 10_000, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('rawRequest: timed out')));
    req.on('error', reject);
    req.end(body);
  });
}
