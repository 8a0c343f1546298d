// Server→client requests of the 2025-11-25 wire (sampling, elicitation, roots) and their answers, which the
// client POSTs back as JSON-RPC responses on its session.
import { ProtocolError } from '../wire/protocol-error.js';
import { isJsonObject, isRequestId, type JsonObject } from '../wire/jsonrpc.js';

interface Waiting {
  resolve(result: JsonObject): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export interface ClientRequests {
  /** Sends a request through `send` and waits for the client's answer (or the timeout / abort). */
  ask(
    sessionId: string,
    send: (json: string) => void,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
  ): Promise<JsonObject>;
  /** Delivers a JSON-RPC response POSTed by the client; false when nothing waits for it. */
  answer(sessionId: string, message: unknown): boolean;
  /** Whether the body is a JSON-RPC response (not a request or notification). */
  isResponse(message: unknown): message is JsonObject;
}

export function createClientRequests(timeoutMs = 120_000): ClientRequests {
  const waiting = new Map<string, Waiting>();
  let counter = 0;
  const keyOf = (sessionId: string, id: string | number): string => `${sessionId}\u0000${String(id)}`;
  return {
    ask(sessionId, send, method, params, signal) {
      const id = `srv-${++counter}`;
      const key = keyOf(sessionId, id);
      return new Promise<JsonObject>((resolve, reject) => {
        const done = (): void => {
          clearTimeout(entry.timer);
          waiting.delete(key);
          signal.removeEventListener('abort', onAbort);
        };
        const onAbort = (): void => {
          done();
          reject(new Error('request aborted'));
        };
        const entry: Waiting = {
          resolve: (r) => {
            done();
            resolve(r);
          },
          reject: (e) => {
            done();
            reject(e);
          },
          timer: setTimeout(() => entry.reject(new Error(`no answer to ${method} in time`)), timeoutMs),
        };
        entry.timer.unref();
        if (signal.aborted) return reject(new Error('request aborted'));
        signal.addEventListener('abort', onAbort);
        waiting.set(key, entry);
        send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      });
    },
    answer(sessionId, message) {
      if (!isJsonObject(message) || !isRequestId(message.id)) return false;
      const entry = waiting.get(keyOf(sessionId, message.id));
      if (entry === undefined) return false;
      if (isJsonObject(message.result)) entry.resolve(message.result);
      else {
        const err = isJsonObject(message.error) ? message.error : {};
        const code = typeof err.code === 'number' ? err.code : -32603;
        entry.reject(new ProtocolError(code, typeof err.message === 'string' ? err.message : 'client error'));
      }
      return true;
    },
    isResponse: (message): message is JsonObject =>
      isJsonObject(message) && message.method === undefined && ('result' in message || 'error' in message),
  };
}
