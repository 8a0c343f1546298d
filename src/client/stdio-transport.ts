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

export interface StdioTransportOptions {
  /** The server's working directory (default: this process's). */
  cwd?: string;
  /** Each line the server writes to stderr (default: read and dropped). */
  onStderr?: (line: string) => void;
  /**
   * The pause before the server is started again after it exited `exits` times in a row within 10 s of starting
   * (default: none): a server that cannot start is not started in a tight loop.
   */
  restartDelayMs?: (exits: number) => number;
}

/** A server process that ran less than this before it exited counts as one that could not start. */
const QUICK_EXIT_MS = 10_000;

/** The server process: started when a request needs it, and again after it exits (see restartDelayMs). */
function serverProcess(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv | undefined,
  options: StdioTransportOptions,
  pending: Map<RequestId, Pending>,
) {
  let child: ChildProcessWithoutNullStreams | undefined;
  let quickExits = 0;
  let lastExitAt = 0;
  const spawnChild = (): ChildProcessWithoutNullStreams => {
    const c = spawn(command, args, { stdio: 'pipe', env: env ?? process.env, cwd: options.cwd });
    child = c;
    const startedAt = Date.now();
    if (options.onStderr === undefined) c.stderr.resume();
    else createInterface({ input: c.stderr }).on('line', options.onStderr);
    createInterface({ input: c.stdout }).on('line', (line) => deliver(pending, line));
    // A write to a server that is gone fails here; its requests fail with the exit (or the spawn error) below.
    c.stdin.on('error', () => undefined);
    let ended = false;
    const end = (err: unknown): void => {
      if (ended) return;
      ended = true;
      lastExitAt = Date.now();
      quickExits = lastExitAt - startedAt < QUICK_EXIT_MS ? quickExits + 1 : 0;
      for (const p of pending.values()) p.reject(err);
      pending.clear();
      if (child === c) child = undefined;
    };
    // The program could not be started (e.g. ENOENT): the error carries its code, and nothing reached a server.
    c.on('error', (err) => end(err));
    c.on('exit', (code) => end(new InvalidResponseError(`the server process exited (${code})`)));
    return c;
  };
  return {
    current: (): ChildProcessWithoutNullStreams | undefined => child,
    /** The running server, started (after the restart delay, while it keeps exiting) when there is none. */
    async start(signal: AbortSignal | undefined): Promise<ChildProcessWithoutNullStreams> {
      if (child === undefined && quickExits > 0 && options.restartDelayMs !== undefined) {
        const wait = lastExitAt + options.restartDelayMs(quickExits) - Date.now();
        if (wait > 0) await pause(wait, signal);
      }
      return child ?? spawnChild();
    },
  };
}

const pause = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

export function createStdioTransport(
  command: string,
  args: string[] = [],
  env?: NodeJS.ProcessEnv,
  options: StdioTransportOptions = {},
): ClientTransport {
  const pending = new Map<RequestId, Pending>();
  const server = serverProcess(command, args, env, options, pending);
  return {
    description: `stdio: ${command} ${args.join(' ')}`,
    async send(request: OutgoingRequest, opts: SendOptions = {}): Promise<TransportReply> {
      const c = await server.start(opts.signal);
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
      const c = server.current();
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
