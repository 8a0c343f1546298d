// Reads a request body up to a limit, as UTF-8 (invalid UTF-8 becomes a marker the JSON parser rejects).
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(new BodyTooLargeError(`Request body exceeds ${max} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      try {
        resolve(UTF8.decode(buf));
      } catch {
        resolve('\u0000invalid-utf8');
      }
    });
    req.on('error', reject);
  });
}
