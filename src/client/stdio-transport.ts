// stdio transport: spawns a server and speaks newline-delimited JSON-RPC with it, routing replies by id.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { isJsonObject, type JsonObject, type RequestId } from '../wire/jsonrpc.js';
import { META_SUBSCRIPTION_ID } from '../wire/meta-keys.js';
import { InvalidResponseError } from './errors.js';
import type { ClientTransport, OutgoingRequest, SendOptions, TransportReply } from './transport.js';

interface Pending {
  resolve: (reply: TransportReply) => void;
  reject: (err: unknown) => void;
  onNotification?: (message: JsonObject) => void;
  progressToken: unknown;
}

/** Routes one line from the server: a response to its request, a notification to the requests it concerns. */
function deliver(pending: Map<RequestId, Pending>, line: string): void {
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (!isJsonObject(msg)) return;
  if ('id' in msg && ('result' in msg || 'error' in msg)) {
    const p = pending.get(msg.id as RequestId);
    pending.delete(msg.id as RequestId);
    p?.resolve({ message: msg });
    return;
  }
  const params = isJsonObject(msg.params) ? msg.params : {};
  const sub = isJsonObject(params._meta) ? params._meta[META_SUBSCRIPTION_ID] : undefined;
  for (const [id, p] of pending) {
    if (
      sub !== undefined
        ? sub === id
        : params.progressToken === undefined || params.progressToken === p.progressToken
    ) {
      p.onNotification?.(msg);
    }
  }
}

export function createStdioTransport(
  command: string,
  args: string[] = [],
  env?: NodeJS.ProcessEnv,
): ClientTransport {
  let child: ChildProcessWithoutNullStreams | undefined;
  const pending = new Map<RequestId, Pending>();
  const start = (): ChildProcessWithoutNullStreams => {
    if (child !== undefined) return child;
    const c = spawn(command, args, { stdio: 'pipe', env: env ?? process.env });
    child = c;
    c.stderr.resume();
    createInterface({ input: c.stdout }).on('line', (line) => deliver(pending, line));
    c.on('exit', (code) => {
      for (const p of pending.values())
        p.reject(new InvalidResponseError(`the server process exited (${code})`));
      pending.clear();
      child = undefined;
    });
    return c;
  };
  return {
    description: `stdio: ${command} ${args.join(' ')}`,
    send(request: OutgoingRequest, opts: SendOptions = {}): Promise<TransportReply> {
      const c = start();
      return new Promise((resolve, reject) => {
        const meta = isJsonObject(request.params._meta) ? request.params._meta : {};
        const { signal } = opts;
        if (signal?.aborted === true) {
          reject(signal.reason);
          return;
        }
        const onAbort = (): void => {
          if (!pending.delete(request.id)) return;
          c.stdin.write(
            `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id } })}\n`,
          );
          reject(signal?.reason ?? new Error('aborted'));
        };
        // The abort listener goes when the request settles: a signal shared by many requests keeps none of them.
        const settled = (): void => signal?.removeEventListener('abort', onAbort);
        pending.set(request.id, {
          resolve: (reply) => {
            settled();
            resolve(reply);
          },
          reject: (err) => {
            settled();
            reject(err);
          },
          onNotification: opts.onNotification,
          progressToken: meta.progressToken,
        });
        signal?.addEventListener('abort', onAbort, { once: true });
        c.stdin.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: request.id, method: request.method, params: request.params })}\n`,
        );
      });
    },
    async close() {
      const c = child;
      if (c === undefined) return;
      c.stdin.end();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => c.kill('SIGTERM'), 2_000);
        c.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
