// A host request coordinator for `@modelcontextprotocol/ext-tasks`' `rawDispatch` option, built on the official
// SDK's own transport: it owns request ids and response matching for the task traffic the SDK Client's typed
// `request()` path cannot carry (2026-07-28 `tools/call` → CreateTaskResult, `tasks/*`), and hands every other
// message to the Client's protocol layer unchanged.
import type { JSONRPCMessage, MessageExtraInfo, Transport } from '@modelcontextprotocol/client';
import {
  DispatchError,
  type JsonRpcResponse,
  type RawClientDispatch,
} from '@modelcontextprotocol/ext-tasks/client';
import type { JsonValue } from '@modelcontextprotocol/ext-tasks/core';

export interface RawExchange {
  request: JsonValue;
  response: JsonRpcResponse;
}

export interface TransportRequestCoordinator {
  /** Pass as `createTaskSessionFromClient(client, { rawDispatch })`. */
  dispatch: RawClientDispatch;
  /** Every request/response pair dispatched so far (for assertions and diagnostics). */
  readonly exchanges: readonly RawExchange[];
  /** Restores the transport's message handler and rejects anything still pending. */
  close(): void;
}

interface Pending {
  resolve(response: JsonRpcResponse): void;
  reject(error: Error): void;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Attaches to a transport the SDK `Client` is already connected over. Call after `client.connect(transport)`:
 * the Client installs its `onmessage` during connect, and this wraps it.
 */
export function createTransportRequestCoordinator(
  transport: Transport,
  options: { idPrefix?: string; defaultTimeoutMs?: number } = {},
): TransportRequestCoordinator {
  const idPrefix = options.idPrefix ?? 'ext-tasks-raw:';
  const pending = new Map<string, Pending>();
  const exchanges: RawExchange[] = [];
  const inner = transport.onmessage;
  if (inner === undefined) throw new Error('connect the SDK Client over this transport first');
  let nextId = 1;
  let closed = false;

  const onmessage = <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo): void => {
    const id = (message as { id?: unknown }).id;
    const waiter = typeof id === 'string' ? pending.get(id) : undefined;
    if (waiter === undefined || 'method' in message) {
      inner(message, extra);
      return;
    }
    pending.delete(id as string);
    if ('result' in message && isRecord(message.result)) {
      waiter.resolve({ kind: 'result', result: message.result as JsonValue });
    } else if ('error' in message && isRecord(message.error)) {
      const {
        code,
        message: text,
        data,
      } = message.error as { code: number; message: string; data?: unknown };
      waiter.resolve({
        kind: 'error',
        error: { code, message: text, ...(data === undefined ? {} : { data: data as JsonValue }) },
      });
    } else {
      waiter.reject(new DispatchError(`malformed JSON-RPC response: ${JSON.stringify(message)}`));
    }
  };
  transport.onmessage = onmessage;

  const dispatch: RawClientDispatch = (request, dispatchOptions = {}) => {
    if (closed) return Promise.reject(new DispatchError('request coordinator closed'));
    if (!isRecord(request)) return Promise.reject(new DispatchError('request must be a JSON object'));
    const id = `${idPrefix}${nextId++}`;
    const message = { ...request, jsonrpc: '2.0', id } as JSONRPCMessage;
    const { signal, context } = dispatchOptions;
    const timeoutMs = context?.requestTimeoutMs ?? options.defaultTimeoutMs ?? 30_000;
    const requestAbort = new AbortController();

    if (signal?.aborted === true) {
      return Promise.reject(new DispatchError(`request ${id} aborted`, false, { cause: signal.reason }));
    }

    return new Promise<JsonRpcResponse>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        pending.delete(id);
      };
      const fail = (error: Error): void => {
        cleanup();
        requestAbort.abort();
        reject(error);
      };
      const onAbort = (): void =>
        fail(new DispatchError(`request ${id} aborted`, false, { cause: signal?.reason }));
      const timer = setTimeout(
        () => fail(new DispatchError(`request ${id} timed out after ${timeoutMs} ms`, true)),
        timeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      pending.set(id, {
        resolve: (response) => {
          cleanup();
          exchanges.push({ request: message as unknown as JsonValue, response });
          resolve(response);
        },
        reject: fail,
      });
      transport
        .send(message, {
          requestSignal: requestAbort.signal,
          ...(context?.headers === undefined ? {} : { headers: context.headers }),
          // The per-request stream ended without our response (server closed it, network dropped it).
          onRequestStreamEnd: () => {
            setImmediate(() =>
              pending.get(id)?.reject(new DispatchError(`stream for ${id} ended without a response`, true)),
            );
          },
        })
        .catch((error: unknown) => {
          // An HTTP-level failure (no JSON-RPC answer to match): not worth retrying blindly.
          pending
            .get(id)
            ?.reject(new DispatchError(`transport send of ${id} failed`, false, { cause: error }));
        });
    });
  };

  return {
    dispatch,
    exchanges,
    close() {
      if (closed) return;
      closed = true;
      if (transport.onmessage === onmessage) transport.onmessage = inner;
      for (const waiter of pending.values()) waiter.reject(new DispatchError('request coordinator closed'));
      pending.clear();
    },
  };
}
