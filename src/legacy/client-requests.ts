// Server→client requests of the 2025-11-25 wire (sampling, elicitation, roots) and their answers, which the
// client POSTs back as JSON-RPC responses on its session — to any replica. An answer that reaches the process that
// asked is delivered at once; one that reaches another replica is kept in the session store, where the asking
// process collects it.
import { ErrorCode } from '../wire/codes.js';
import { randomBytes } from 'node:crypto';
import type { PendingRequestStore } from '../tasks/sessions.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { isJsonObject, isRequestId, type JsonObject } from '../wire/jsonrpc.js';

export interface ClientRequests {
  /** Sends a request through `send` and waits for the client's answer (or the timeout / abort). */
  ask(
    sessionId: string,
    send: (json: string) => void,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
  ): Promise<JsonObject>;
  /**
   * Delivers a JSON-RPC response POSTed by the client: to the request waiting in this process, else to the
   * session store for the replica that asked. False when no open request of the session has that id.
   */
  answer(sessionId: string, message: unknown): Promise<boolean>;
  /** Whether the body is a JSON-RPC response (not a request or notification). */
  isResponse(message: unknown): message is JsonObject;
  /**
   * Waits, sending nothing, for news of request `requestId` of the session that another exchange reports
   * (`report`), on this replica or another: the message, or undefined once the signal aborts.
   */
  follow(sessionId: string, requestId: string, signal: AbortSignal): Promise<JsonObject | undefined>;
  /** Hands news of request `requestId` of the session to whoever follows it; false when nobody does. */
  report(sessionId: string, requestId: string, message: JsonObject): Promise<boolean>;
}

export interface ClientRequestOptions {
  /** Shared by the replicas: answers POSTed to another replica reach the asking one through it. */
  store?: PendingRequestStore;
  /** How long a request waits for its answer (default 2 minutes). */
  timeoutMs?: number;
  /** How often the store is read for answers while requests of this process wait (default 100 ms). */
  pollMs?: number;
  now?: () => number;
}

/** Ids of the requests this module sends: random, so that replicas asking on one session never collide. */
const REQUEST_ID = /^srv-[A-Za-z0-9_-]{16}$/;

const keyOf = (sessionId: string, id: string): string => `${sessionId}\u0000${id}`;

function outcome(message: JsonObject): JsonObject | ProtocolError {
  if (isJsonObject(message.result)) return message.result;
  const err = isJsonObject(message.error) ? message.error : {};
  const code = typeof err.code === 'number' ? err.code : ErrorCode.InternalError;
  return new ProtocolError(code, typeof err.message === 'string' ? err.message : 'client error');
}

/**
 * While requests of this process wait, the store is read for answers that other replicas received. Returns the
 * function that starts or stops the reads as requests begin and end waiting.
 */
function answerPoller(
  store: PendingRequestStore | undefined,
  origin: string,
  waiting: Map<string, (message: JsonObject) => void>,
  pollMs: number,
): () => void {
  let poller: NodeJS.Timeout | undefined;
  const collect = async (): Promise<void> => {
    if (store === undefined) return;
    let answers;
    try {
      answers = await store.answersFor(origin);
    } catch {
      return; // the store is unreachable: the next poll tries again
    }
    for (const a of answers) waiting.get(keyOf(a.sessionId, a.requestId))?.(a.message);
  };
  return () => {
    if (store === undefined) return;
    if (waiting.size > 0 && poller === undefined) {
      poller = setInterval(() => void collect(), pollMs);
      poller.unref();
    } else if (waiting.size === 0 && poller !== undefined) {
      clearInterval(poller);
      poller = undefined;
    }
  };
}

/** What following a request shares with the rest of the module. */
interface FollowDeps {
  store: PendingRequestStore | undefined;
  origin: string;
  now: () => number;
  waiting: Map<string, (message: JsonObject) => void>;
  updatePoller: () => void;
}

/** ClientRequests.follow: a waiting entry without a request sent, open in the store for the other replicas. */
async function followRequest(
  deps: FollowDeps,
  sessionId: string,
  requestId: string,
  signal: AbortSignal,
): Promise<JsonObject | undefined> {
  const { store, waiting, updatePoller } = deps;
  if (signal.aborted) return undefined;
  const key = keyOf(sessionId, requestId);
  // Registered before the store is written to, so news from this process is never missed.
  const news = new Promise<JsonObject | undefined>((resolve) => {
    let done = false;
    function finish(message: JsonObject | undefined): void {
      if (done) return;
      done = true;
      if (waiting.get(key) === finish) waiting.delete(key);
      signal.removeEventListener('abort', onAbort);
      updatePoller();
      resolve(message);
    }
    const onAbort = (): void => finish(undefined);
    waiting.set(key, finish);
    signal.addEventListener('abort', onAbort);
    updatePoller();
    if (signal.aborted) onAbort();
  });
  try {
    await store?.openRequest(sessionId, requestId, deps.origin, deps.now());
    return await news;
  } finally {
    await store?.closeRequest(sessionId, requestId).catch(() => undefined);
  }
}

export function createClientRequests(options: ClientRequestOptions = {}): ClientRequests {
  const { store } = options;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const pollMs = options.pollMs ?? 100;
  const now = options.now ?? Date.now;
  /** This process, as the `origin` of the requests it opens in the store. */
  const origin = randomBytes(12).toString('base64url');
  /** The requests of this process waiting for their answer (the client's response message), by session and id. */
  const waiting = new Map<string, (message: JsonObject) => void>();
  const updatePoller = answerPoller(store, origin, waiting, pollMs);

  return {
    async ask(sessionId, send, method, params, signal) {
      if (signal.aborted) throw new Error('request aborted');
      const requestId = `srv-${randomBytes(12).toString('base64url')}`;
      const key = keyOf(sessionId, requestId);
      // Opened in the store before it is sent, so an answer on another replica finds it.
      await store?.openRequest(sessionId, requestId, origin, now());
      try {
        const message = await new Promise<JsonObject>((resolve, reject) => {
          const timer = setTimeout(() => finish(new Error(`no answer to ${method} in time`)), timeoutMs);
          timer.unref();
          function finish(result: JsonObject | Error): void {
            if (!waiting.delete(key)) return;
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            updatePoller();
            if (result instanceof Error) reject(result);
            else resolve(result);
          }
          function onAbort(): void {
            finish(new Error('request aborted'));
          }
          waiting.set(key, finish);
          signal.addEventListener('abort', onAbort);
          updatePoller();
          if (signal.aborted) return onAbort();
          send(JSON.stringify({ jsonrpc: '2.0', id: requestId, method, params }));
        });
        const result = outcome(message);
        if (result instanceof ProtocolError) throw result;
        return result;
      } finally {
        await store?.closeRequest(sessionId, requestId).catch(() => undefined);
      }
    },

    async answer(sessionId, message) {
      if (!isJsonObject(message) || !isRequestId(message.id)) return false;
      if (typeof message.id !== 'string' || !REQUEST_ID.test(message.id)) return false;
      const settle = waiting.get(keyOf(sessionId, message.id));
      if (settle !== undefined) {
        settle(message);
        return true;
      }
      return (await store?.answerRequest(sessionId, message.id, message)) ?? false;
    },

    follow: (sessionId, requestId, signal) =>
      followRequest({ store, origin, now, waiting, updatePoller }, sessionId, requestId, signal),

    async report(sessionId, requestId, message) {
      const settle = waiting.get(keyOf(sessionId, requestId));
      if (settle !== undefined) {
        settle(message);
        return true;
      }
      return (await store?.answerRequest(sessionId, requestId, message)) ?? false;
    },

    isResponse: (message): message is JsonObject =>
      isJsonObject(message) && message.method === undefined && ('result' in message || 'error' in message),
  };
}
