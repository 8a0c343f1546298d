// The gateway's connection to a 2025-11-25 upstream: a client session over stdio (a child process) or Streamable
// HTTP, made with the official SDK's client. It connects lazily and again after the session closes (a crashed child
// is started anew, with back-off; an HTTP session whose transport fails and that no longer answers a ping is closed),
// lists the upstream's tools, and sends calls. A call the upstream demonstrably did not take (connection refused, or
// an HTTP 4xx answer such as the one for a session a restarted server no longer knows) is sent again on a new
// session. When the gateway's call is a task and the upstream allows one for the tool, the call asks for a task of
// the upstream's, followed and cancelled by session-tasks.ts. The session declares elicitation, sampling and roots:
// the upstream's requests during a call go to that call (session-input.ts).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { CallToolResult, JsonObject } from '../protocol/types.js';
import { VERSION } from '../version.js';
import { upstreamFetch } from './authorized-fetch.js';
import { linkedFetch } from './linked-fetch.js';
import {
  acceptInput,
  callOut,
  originNotingFetch,
  SESSION_CAPABILITIES,
  type SessionCalls,
} from './session-input.js';
import {
  asksForTask,
  callParams,
  callRequestOptions,
  cancelSessionTask,
  createSessionTasks,
  followSessionTask,
  sendTaskCall,
  type SessionTasks,
  type TaskParts,
} from './session-tasks.js';
import {
  backoff,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  describeTarget,
  errorMessage,
  signInFailure,
  UpstreamLostError,
  UpstreamNotSentError,
  UpstreamRefusedError,
  type Upstream,
  type UpstreamAnswer,
  type UpstreamCallOptions,
  type UpstreamOptions,
  type UpstreamTarget,
} from './upstream.js';

function transportFor(
  target: UpstreamTarget,
  calls: SessionCalls,
): { transport: Transport; stderr: Readable | undefined } {
  if (target.kind === 'http') {
    const requestInit = target.headers === undefined ? undefined : { headers: target.headers };
    const fetch = originNotingFetch(linkedFetch(upstreamFetch(target)), calls);
    const transport = new StreamableHTTPClientTransport(target.url, { requestInit, fetch });
    return { transport, stderr: undefined };
  }
  const transport = new StdioClientTransport({
    command: target.command,
    args: target.args,
    // Only the variables a child needs to run, and those named for it: never the gateway's own secrets.
    env: { ...getDefaultEnvironment(), ...target.env },
    cwd: target.cwd,
    stderr: 'pipe',
  });
  return { transport, stderr: (transport.stderr ?? undefined) as Readable | undefined };
}

/** Pause before a call the upstream did not take is sent again on a new session. */
const RESEND_PAUSE_MS = 100;

const causes = function* (err: unknown): Generator<unknown> {
  for (let e = err, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    yield e;
};

/**
 * Whether the upstream demonstrably did not take a request: the connection was refused, or the POST was answered
 * with an HTTP 4xx (404 for a session the server no longer knows, 400 as SDK v1 servers answer one), which a
 * Streamable HTTP server gives before it handles the message.
 */
function notTaken(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return (err.code ?? 0) >= 400 && (err.code ?? 0) < 500;
  for (const e of causes(err)) if ((e as { code?: unknown } | null)?.code === 'ECONNREFUSED') return true;
  return false;
}

/** A call's SDK error as one of ours: refused (a JSON-RPC error answer) or lost (closed, timed out). */
function classify(err: unknown, signal: AbortSignal | undefined): Error {
  if (signal?.aborted === true) return err instanceof Error ? err : new Error(String(err));
  const signIn = signInFailure(err);
  if (signIn !== undefined) return new UpstreamNotSentError(signIn.message, { cause: signIn });
  if (err instanceof McpError) {
    if (err.code === (ErrorCode.ConnectionClosed as number))
      return new UpstreamLostError(`the upstream session closed during the call: ${err.message}`);
    if (err.code === (ErrorCode.RequestTimeout as number))
      return new UpstreamLostError(`the upstream did not answer in time: ${err.message}`);
    return new UpstreamRefusedError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data);
  }
  return new UpstreamLostError(`the call to the upstream failed: ${errorMessage(err)}`);
}

interface SessionParts {
  target: UpstreamTarget;
  name: string;
  connectTimeoutMs: number;
  log: NonNullable<UpstreamOptions['log']>;
  /** The open sessions whose tasks can be followed. */
  tasks: SessionTasks;
  /** Told of the upstream's tools/list_changed. */
  toolsChanged: () => void;
  /** Told when this session closes (the child exited, the connection dropped, or close()). */
  closed: (client: Client) => void;
  /** Told of an error of this session's transport (e.g. a response stream cut off). */
  failed: (client: Client) => void;
}

/** Opens one client session; UpstreamNotSentError when it cannot. */
async function openSession(parts: SessionParts): Promise<Client> {
  const { target, name, log } = parts;
  const client = new Client(
    { name: 'durable-mcp-gateway', version: VERSION },
    { capabilities: SESSION_CAPABILITIES },
  );
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => parts.toolsChanged());
  const { transport, stderr } = transportFor(target, acceptInput(client, target.kind));
  if (stderr !== undefined)
    createInterface({ input: stderr }).on('line', (line) =>
      log('info', 'upstream stderr', { upstream: name, line }),
    );
  client.onclose = () => {
    parts.tasks.remove(client);
    parts.closed(client);
  };
  client.onerror = () => parts.failed(client);
  try {
    await client.connect(transport, { timeout: parts.connectTimeoutMs });
  } catch (err) {
    await client.close().catch(() => undefined);
    // A sign-in that cannot be made is said as it is (run `durable-mcp login`), and not tried again at once.
    const signIn = signInFailure(err);
    if (signIn !== undefined) throw new UpstreamNotSentError(signIn.message, { cause: signIn });
    throw new UpstreamNotSentError(`cannot reach the upstream (${name}): ${errorMessage(err)}`);
  }
  parts.tasks.add(client, (transport as { sessionId?: string }).sessionId);
  log('info', 'upstream session open', {
    upstream: name,
    server: client.getServerVersion()?.name ?? null,
    serverVersion: client.getServerVersion()?.version ?? null,
  });
  return client;
}

/**
 * Closes `client`'s session when its transport failed and it no longer answers a ping: an HTTP transport does not
 * close by itself when the server dies (a cut response stream only reports an error), so without this the calls
 * out on it would wait for their timeout and the next ones would go to a session the server no longer knows.
 * Closing rejects the calls out on it as lost. One check at a time per session.
 */
function healthCheck(parts: Omit<SessionParts, 'closed' | 'failed'>, drop: (client: Client) => void) {
  const checking = new WeakSet<Client>();
  return (client: Client): void => {
    if (checking.has(client)) return;
    checking.add(client);
    client.ping({ timeout: parts.connectTimeoutMs }).then(
      () => checking.delete(client),
      (err: unknown) => {
        parts.log('warn', 'upstream session lost; the next call opens another', {
          upstream: parts.name,
          error: errorMessage(err),
        });
        drop(client);
      },
    );
  };
}

/** The session of an upstream: opened when first needed and again after it closes, with back-off between failures. */
function sessionKeeper(parts: Omit<SessionParts, 'closed' | 'failed'>) {
  let session: Promise<Client> | undefined;
  let current: Client | undefined;
  let failures = 0;
  let nextTryAt = 0;
  let closed = false;
  const closedSession = (client: Client): void => {
    if (current !== client) return;
    current = undefined;
    session = undefined;
    if (!closed)
      parts.log('warn', 'upstream session closed; the next call opens another', { upstream: parts.name });
  };
  /** Forgets the session of `client` (the next call opens another) and closes it. */
  const drop = (client: Client): void => {
    if (current === client) {
      current = undefined;
      session = undefined;
    }
    void client.close().catch(() => undefined);
  };
  const failedSession = healthCheck(parts, (client) => {
    if (current === client) drop(client);
  });
  const open = async (): Promise<Client> => {
    const wait = nextTryAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      current = await openSession({ ...parts, closed: closedSession, failed: failedSession });
    } catch (err) {
      failures++;
      nextTryAt = Date.now() + backoff(failures);
      throw err;
    }
    failures = 0;
    return current;
  };
  /** The open session, opening one when there is none. */
  const connected = (): Promise<Client> => {
    if (closed)
      return Promise.reject(
        new UpstreamNotSentError(`the gateway is closing; nothing was sent to ${parts.name}`),
      );
    session ??= open().catch((err: unknown) => {
      session = undefined;
      throw err;
    });
    return session;
  };
  return {
    drop,
    /** connected(), tried again until connectTimeoutMs has passed. */
    async ready(signal?: AbortSignal): Promise<Client> {
      const until = Date.now() + parts.connectTimeoutMs;
      for (;;) {
        try {
          return await connected();
        } catch (err) {
          if (Date.now() >= until || signal?.aborted === true || closed || signInFailure(err)) throw err;
        }
      }
    },
    async close(): Promise<void> {
      closed = true;
      const open = session;
      session = undefined;
      if (open !== undefined) await (await open.catch(() => undefined))?.close();
    },
  };
}

/**
 * One tools/call on a session, with progress and the call timeout (reset by progress); asking for a task of the
 * upstream's when it may (session-tasks.ts).
 */
async function sendCall(
  client: Client,
  tasks: SessionTasks,
  tool: string,
  args: JsonObject,
  call: UpstreamCallOptions,
  callTimeoutMs: number,
): Promise<UpstreamAnswer> {
  if (asksForTask(client, call)) return sendTaskCall(client, tasks, tool, args, call, callTimeoutMs);
  const result = await client.callTool(
    callParams(tool, args, call),
    CallToolResultSchema,
    callRequestOptions(call, callTimeoutMs),
  );
  return result as unknown as CallToolResult;
}

/**
 * An upstream spoken to with a 2025-11-25 session (the official SDK's client). `tasks`, shared by the sessions of one
 * upstream (a pool, sessions per principal), finds the session a task of the upstream's belongs to.
 */
export function createSessionUpstream(
  target: UpstreamTarget,
  options: UpstreamOptions = {},
  tasks: SessionTasks = createSessionTasks(),
): Upstream {
  const name = describeTarget(target);
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const log = options.log ?? (() => undefined);
  const listeners: (() => void)[] = [];
  const taskParts: TaskParts = { target, name, tasks, callTimeoutMs, connectTimeoutMs, log };
  const keeper = sessionKeeper({
    target,
    name,
    connectTimeoutMs,
    log,
    tasks,
    toolsChanged: () => {
      for (const listener of listeners) listener();
    },
  });
  return {
    name,
    ready: async (signal) => {
      await keeper.ready(signal);
    },
    async listTools() {
      const client = await keeper.ready();
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    },
    // A call the upstream did not take is sent again on a new session until connectTimeoutMs has passed.
    async callTool(tool, args, call = {}) {
      const until = Date.now() + connectTimeoutMs;
      for (;;) {
        const client = await keeper.ready(call.signal);
        // Until it ends, the upstream's requests during the call go to it (session-input.ts).
        const end = callOut(client, call);
        try {
          return await sendCall(client, tasks, tool, args, call, callTimeoutMs);
        } catch (err) {
          if (call.signal?.aborted === true || !notTaken(err)) throw classify(err, call.signal);
          keeper.drop(client);
          if (Date.now() >= until)
            throw new UpstreamNotSentError(`the upstream did not take the call: ${errorMessage(err)}`);
          await new Promise((resolve) => setTimeout(resolve, RESEND_PAUSE_MS));
        } finally {
          end();
        }
      }
    },
    followTask: (taskId, follow) => followSessionTask(taskParts, taskId, follow),
    cancelTask: (taskId, _owner, created) => cancelSessionTask(taskParts, taskId, created),
    onToolsChanged: (listener) => {
      listeners.push(listener);
    },
    close: () => keeper.close(),
  };
}
