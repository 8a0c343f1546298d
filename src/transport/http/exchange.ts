// One POST on the modern (2026-07-28) path: its dispatch input for the core, and its answer.
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '../../protocol/tool-types.js';
import type { DispatchInput, DispatchOutcome, McpServer } from '../../protocol/server.js';
import { ErrorCode, httpStatusFor } from '../../wire/codes.js';
import type { HeaderLookup } from '../../wire/headers.js';
import {
  errorResponse,
  notificationMessage,
  responseFor,
  type IncomingRequest,
  type JsonObject,
} from '../../wire/jsonrpc.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import type { HttpReply } from './reply.js';
import { noop, onAbort } from '../../protocol/on-abort.js';

/**
 * One POST's dispatch input. A class rather than an object literal: a literal with a getter (the lazy `signal`)
 * gets a hidden class of its own on every evaluation, allocated where only full collections free it, which under
 * load costs more than the request itself.
 */
export class HttpExchange implements DispatchInput {
  /** Created only if a handler asks for the signal: most requests never do. */
  private abort: AbortController | undefined;

  constructor(
    private readonly req: IncomingMessage,
    readonly reply: HttpReply,
    public request: IncomingRequest,
    readonly auth: AuthInfo,
    public header: HeaderLookup | undefined,
  ) {}

  /**
   * The request went to its handler: only its id and method are kept for the answer (not its params, nor the
   * headers, which its scope has).
   */
  handed(): void {
    const { id, method } = this.request;
    this.request = { kind: 'request', id, method, params: undefined };
    this.header = undefined;
  }

  /** The client went away before the response was finished. */
  private gone(): boolean {
    const res = this.reply.res;
    return !res.writableFinished && (res.destroyed || this.req.socket.destroyed);
  }

  aborted(): boolean {
    return this.abort?.signal.aborted === true || this.gone();
  }

  get signal(): AbortSignal {
    if (this.abort === undefined) {
      const controller = new AbortController();
      this.abort = controller;
      const res = this.reply.res;
      if (this.gone()) controller.abort();
      else
        res.on('close', () => {
          if (!res.writableFinished) controller.abort();
        });
    }
    return this.abort.signal;
  }

  /**
   * Calls `fn` once if the client goes away before the response is finished (at once when it already has); returns
   * the way to stop waiting. Cheaper than `signal` for one long-lived waiter: a close listener, no AbortController.
   */
  onGone(fn: () => void): () => void {
    if (this.abort !== undefined) return onAbort(this.abort.signal, fn);
    if (this.gone()) {
      fn();
      return noop;
    }
    // The reply's own close listener, when no other waiter has it; else a listener of this waiter's.
    const stop = this.reply.onGone(fn);
    if (stop !== undefined) return stop;
    const res = this.reply.res;
    const onClose = (): void => {
      if (!res.writableFinished) fn();
    };
    res.once('close', onClose);
    return () => void res.off('close', onClose);
  }

  emit(method: string, params: JsonObject): void {
    if (!this.aborted()) this.reply.send(notificationMessage(method, params));
  }

  whenWritable(): Promise<void> {
    return this.gone() ? Promise.resolve() : this.reply.writable();
  }
}

/** Whether the client takes an event stream as the response (2026-07-28 clients must list it in Accept). */
export const takesEvents = (header: HeaderLookup): boolean =>
  /text\/event-stream|\*\/\*/i.test(header('accept') ?? '');

/**
 * Dispatches one request to the core and writes its answer: JSON with the code's status, or the stream's end.
 * `onError` is told of an error in writing it (one function for every request: nothing of its own per stream). Chained, not awaited, and no promise returned: an open stream holds
 * no suspended frame of this function, and nothing waits on it but the one reaction that writes the answer.
 */
export function answerRequest(
  server: McpServer,
  exchange: HttpExchange,
  header: HeaderLookup,
  onError: (reply: HttpReply, err: unknown) => void,
): void {
  let pending: DispatchOutcome | Promise<DispatchOutcome>;
  try {
    pending = server.dispatchNow === undefined ? server.dispatch(exchange) : server.dispatchNow(exchange);
  } catch (err) {
    pending = Promise.reject(err as Error);
  }
  // Known at once (a refusal, a synchronous handler): written now, without a promise and its turn, nor a silence
  // limit (armed at the end of this turn, by when the answer is out).
  if (!(pending instanceof Promise)) {
    writeAnswer(exchange, pending, onError);
    return;
  }
  if (takesEvents(header)) exchange.reply.limitSilence();
  pending.then(
    (outcome) => writeAnswer(exchange, outcome, onError),
    () => writeAnswer(exchange, internalError(), onError),
  );
}

const internalError = (): DispatchOutcome => ({
  ok: false,
  error: new ProtocolError(ErrorCode.InternalError, 'Internal error'),
  origin: 'handler',
});

/** Writes the request's answer: JSON with the code's status, or the stream's end (nothing when the client left). */
function writeAnswer(
  exchange: HttpExchange,
  outcome: DispatchOutcome,
  onError: (reply: HttpReply, err: unknown) => void,
): void {
  try {
    writeOutcome(exchange, outcome);
  } catch (err) {
    onError(exchange.reply, err);
  }
}

function writeOutcome(exchange: HttpExchange, outcome: DispatchOutcome): void {
  const { reply, request } = exchange;
  if (exchange.aborted()) {
    reply.stop();
    return;
  }
  // A result that cannot be serialized is -32603 for this caller alone.
  const response = outcome.ok ? responseFor(request.id, outcome.result) : undefined;
  const text = response?.text ?? errorResponse(request.id, (outcome as { error: ProtocolError }).error);
  if (reply.streaming) {
    reply.finish(text);
    return;
  }
  let status: number;
  if (!outcome.ok) status = httpStatusFor(outcome.error.code, outcome.origin);
  else status = response?.failed === true ? httpStatusFor(ErrorCode.InternalError, 'handler') : 200;
  const retryAfterMs = outcome.ok
    ? undefined
    : (outcome.error.data as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  reply.json(
    status,
    text,
    status === 429 && typeof retryAfterMs === 'number'
      ? { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) }
      : NO_HEADERS,
  );
}

/** The extra headers of most answers: none (one object for all of them, never written to). */
const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;
