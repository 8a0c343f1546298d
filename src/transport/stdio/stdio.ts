// stdio transport: newline-delimited JSON-RPC over a readable/writable pair, same dispatcher as HTTP.
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { AuthInfo } from '../../protocol/tool-types.js';
import type { McpServer } from '../../protocol/server.js';
import {
  errorResponse,
  isJsonObject,
  notificationMessage,
  parseMessage,
  responseFor,
  type RequestId,
} from '../../wire/jsonrpc.js';
import { settleOrAbort } from '../../pacing/grace.js';

export interface StdioOptions {
  server: McpServer;
  input: Readable;
  output: Writable;
  auth?: AuthInfo;
  /**
   * Once the input ends (the client shuts the server down), how long requests still running may take to answer
   * before they are aborted (default 10 s). Open `subscriptions/listen` streams are ended at once.
   */
  graceMs?: number;
}

/** After aborting what still ran, how long its answers are waited for before serveStdio resolves anyway. */
const ABORTED_WAIT_MS = 1_000;

/**
 * Serves until the input ends, then resolves once every in-flight request has answered: within `graceMs`, after
 * which they are aborted (and waited for a moment more). So a client that closes the server's input, as MCP's stdio
 * shutdown begins, gets its pending answers and then an exit, never a process kept alive by a stream nobody reads.
 */
export async function serveStdio(options: StdioOptions): Promise<void> {
  const auth = options.auth ?? { tenant: 'default', principal: 'stdio' };
  const inflight = new Map<RequestId, AbortController>();
  /** The in-flight subscriptions/listen requests: ended as soon as the input ends. */
  const streams = new Set<AbortController>();
  const pending = new Set<Promise<void>>();
  const write = (line: string): void => {
    options.output.write(`${line}\n`);
  };
  const lines = createInterface({ input: options.input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim().length === 0) continue;
    const parsed = parseMessage(line);
    if (!parsed.ok) {
      write(errorResponse(parsed.id, parsed.error));
      continue;
    }
    const msg = parsed.value;
    if (msg.kind === 'notification') {
      if (msg.method === 'notifications/cancelled' && isJsonObject(msg.params)) {
        inflight.get(msg.params.requestId as RequestId)?.abort();
      }
      continue;
    }
    const abort = new AbortController();
    inflight.set(msg.id, abort);
    if (msg.method === 'subscriptions/listen') streams.add(abort);
    const work = options.server
      .dispatch({
        request: msg,
        auth,
        signal: abort.signal,
        header: undefined,
        emit: (method, params) => {
          if (!abort.signal.aborted) write(notificationMessage(method, params));
        },
      })
      .then((outcome) => {
        inflight.delete(msg.id);
        streams.delete(abort);
        write(outcome.ok ? responseFor(msg.id, outcome.result).text : errorResponse(msg.id, outcome.error));
      });
    pending.add(work);
    void work.finally(() => pending.delete(work));
  }
  await settle(pending, streams, inflight, options.graceMs ?? 10_000);
}

/** The input ended: listen streams end now, other requests get `graceMs` and are then aborted. */
async function settle(
  pending: Set<Promise<void>>,
  streams: Set<AbortController>,
  inflight: Map<RequestId, AbortController>,
  graceMs: number,
): Promise<void> {
  for (const stream of streams) stream.abort();
  const abortInflight = (): void => {
    for (const abort of inflight.values()) abort.abort();
  };
  await settleOrAbort(Promise.all(pending), graceMs, abortInflight, ABORTED_WAIT_MS);
}
