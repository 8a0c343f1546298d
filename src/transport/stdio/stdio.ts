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

export interface StdioOptions {
  server: McpServer;
  input: Readable;
  output: Writable;
  auth?: AuthInfo;
}

/** Serves until the input ends; resolves once every in-flight request has answered. */
export async function serveStdio(options: StdioOptions): Promise<void> {
  const auth = options.auth ?? { tenant: 'default', principal: 'stdio' };
  const inflight = new Map<RequestId, AbortController>();
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
        write(outcome.ok ? responseFor(msg.id, outcome.result).text : errorResponse(msg.id, outcome.error));
      });
    pending.add(work);
    void work.finally(() => pending.delete(work));
  }
  await Promise.all(pending);
}
