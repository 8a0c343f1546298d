// Reads a request body up to a limit, as UTF-8 (invalid UTF-8 becomes a marker the JSON parser rejects), within a
// budget of bytes shared by every body being read at once. (A slow upload is bounded by the server's requestTimeout.)
import { isAscii } from 'node:buffer';
import type { IncomingMessage } from 'node:http';

export class BodyTooLargeError extends Error {}
/** The shared budget is spent: the server is busy reading other bodies. */
export class BodyBudgetError extends Error {}

/** Bytes held by bodies being read; a body that would go over `max` is refused. */
export interface BodyBudget {
  used: number;
  readonly max: number;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

export function readBody(req: IncomingMessage, max: number, budget?: BodyBudget): Promise<string> {
  return new Promise((resolve, reject) => receiveBody(req, max, budget, resolve, reject));
}

/**
 * As `readBody`, without a promise: calls `done` with the body (as the request's end is emitted), or `failed` with the
 * error, once.
 */
export function receiveBody(
  req: IncomingMessage,
  max: number,
  budget: BodyBudget | undefined,
  done: (body: string) => void,
  failed: (err: Error) => void,
): void {
  // Once the body is read, its listeners leave the request (a stream's lives for hours); after a failure they
  // stay, holding neither the bytes nor the callbacks (and through them the body).
  let resolve: ((body: string) => void) | undefined = done;
  let reject: ((err: Error) => void) | undefined = failed;
  const chunks: Buffer[] = [];
  let size = 0;
  const settle = (): boolean => {
    if (resolve === undefined) return false;
    resolve = undefined;
    reject = undefined;
    chunks.length = 0;
    if (budget !== undefined) budget.used -= size;
    return true;
  };
  const settled = (): boolean => resolve === undefined;
  const fail = (err: Error): void => {
    const rejectNow = reject;
    if (settle()) rejectNow?.(err);
  };
  const onData = (chunk: Buffer): void => {
    if (settled()) return;
    if (size + chunk.length > max) return fail(new BodyTooLargeError(`Request body exceeds ${max} bytes`));
    if (budget !== undefined && budget.used + chunk.length > budget.max)
      return fail(new BodyBudgetError('Server busy: too many request bodies in flight'));
    size += chunk.length;
    if (budget !== undefined) budget.used += chunk.length;
    chunks.push(chunk);
  };
  const onError = (err: Error): void => fail(err);
  const onEnd = (): void => {
    const resolveNow = resolve;
    if (resolveNow === undefined) return;
    const buf = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    settle();
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    req.on('error', ignoreError);
    let text: string;
    try {
      // ASCII (most bodies) reads the same in Latin-1, which decodes faster and never fails.
      text = isAscii(buf) ? buf.toString('latin1') : UTF8.decode(buf);
    } catch {
      text = '\u0000invalid-utf8';
    }
    resolveNow(text);
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
}

/** A request whose body was read may still fail (its client going away): nothing is waiting for it any more. */
const ignoreError = (): void => undefined;
