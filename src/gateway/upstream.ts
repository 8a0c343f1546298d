// The gateway's connection to the MCP server it fronts (the upstream): a 2025-11-25 client session over stdio (a child
// process) or Streamable HTTP, made with the official SDK's client. It connects lazily and again after the session
// closes (a crashed child is started anew, with back-off; an HTTP session whose transport fails and that no longer
// answers a ping is closed), lists the upstream's tools, and sends calls. A call the upstream demonstrably did not
// take (connection refused, or an HTTP 4xx answer such as the one for a session a restarted server no longer knows)
// is sent again on a new session. A call's errors say whether the request can have reached the upstream:
// `UpstreamNotSentError` (it cannot), or `UpstreamLostError` (the session ended or timed out while the call was out:
// the upstream may have done it).
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

/** Where the upstream is: a command to run (stdio) or the URL of its Streamable HTTP endpoint. */
export type UpstreamTarget =
  | { kind: 'stdio'; command: string; args: string[]; env?: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: URL; headers?: Record<string, string> };

/** A tool as the upstream lists it (its name, schemas and annotations, passed on unchanged). */
export type UpstreamTool = Tool;

/** The request cannot have reached the upstream (no session could be opened, or it closed before sending). */
export class UpstreamNotSentError extends Error {
  override name = 'UpstreamNotSentError';
}

/** The session ended, or the call timed out, while the call was out: the upstream may or may not have done it. */
export class UpstreamLostError extends Error {
  override name = 'UpstreamLostError';
}

/** The upstream answered the call with a JSON-RPC error: a definite refusal, the same on every attempt. */
export class UpstreamRefusedError extends Error {
  override name = 'UpstreamRefusedError';
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

export interface UpstreamCallOptions {
  signal?: AbortSignal;
  /** Each `notifications/progress` of the call (a progress token is sent only when given). */
  onProgress?: (progress: number, total: number | undefined, message: string | undefined) => void;
  /** Merged into the request's `_meta`. */
  meta?: JsonObject;
}

export interface UpstreamOptions {
  /** How long one call may take without progress before it counts as lost (default one hour). */
  callTimeoutMs?: number;
  /** How long a call waits for a session to open before it fails as not sent (default 30 s). */
  connectTimeoutMs?: number;
  /** The child's stderr lines (stdio), and what happened to the session; never a credential. */
  log?: (level: 'info' | 'warn', message: string, fields?: JsonObject) => void;
}

export interface Upstream {
  /** A readable name for logs and errors: the command or the URL (without credentials). */
  readonly name: string;
  /** Opens the session if needed (waiting up to connectTimeoutMs); throws UpstreamNotSentError when it cannot. */
  ready(signal?: AbortSignal): Promise<void>;
  /** Every tool the upstream lists now (all pages). */
  listTools(): Promise<UpstreamTool[]>;
  callTool(name: string, args: JsonObject, options?: UpstreamCallOptions): Promise<CallToolResult>;
  /** Called when the upstream says its tool list changed. */
  onToolsChanged(listener: () => void): void;
  close(): Promise<void>;
}

const DEFAULT_CALL_TIMEOUT_MS = 60 * 60 * 1000;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** Back-off between attempts to open a session: doubling from 100 ms to 5 s. */
const backoff = (failures: number): number => Math.min(5_000, 100 * 2 ** Math.min(failures, 6));

/** The upstream's name in logs: the command and its arguments, or the URL without user info, query or fragment. */
export function describeTarget(target: UpstreamTarget): string {
  if (target.kind === 'stdio') return `stdio:${[target.command, ...target.args].join(' ')}`;
  return `${target.url.origin}${target.url.pathname}`;
}

function transportFor(target: UpstreamTarget): { transport: Transport; stderr: Readable | undefined } {
  if (target.kind === 'http') {
    const requestInit = target.headers === undefined ? undefined : { headers: target.headers };
    return { transport: new StreamableHTTPClientTransport(target.url, { requestInit }), stderr: undefined };
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
  if (err instanceof McpError) {
    if (err.code === (ErrorCode.ConnectionClosed as number))
      return new UpstreamLostError(`the upstream session closed during the call: ${err.message}`);
    if (err.code === (ErrorCode.RequestTimeout as number))
      return new UpstreamLostError(`the upstream did not answer in time: ${err.message}`);
    return new UpstreamRefusedError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data);
  }
  return new UpstreamLostError(
    `the call to the upstream failed: ${err instanceof Error ? err.message : String(err)}`,
  );
}

interface SessionParts {
  target: UpstreamTarget;
  name: string;
  connectTimeoutMs: number;
  log: NonNullable<UpstreamOptions['log']>;
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
  const client = new Client({ name: 'durable-mcp-gateway', version: VERSION }, { capabilities: {} });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => parts.toolsChanged());
  const { transport, stderr } = transportFor(target);
  if (stderr !== undefined)
    createInterface({ input: stderr }).on('line', (line) =>
      log('info', 'upstream stderr', { upstream: name, line }),
    );
  client.onclose = () => parts.closed(client);
  client.onerror = () => parts.failed(client);
  try {
    await client.connect(transport, { timeout: parts.connectTimeoutMs });
  } catch (err) {
    await client.close().catch(() => undefined);
    throw new UpstreamNotSentError(
      `cannot reach the upstream (${name}): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  log('info', 'upstream session open', {
    upstream: name,
    protocolVersion: client.getServerVersion()?.version ?? null,
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
          error: err instanceof Error ? err.message : String(err),
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
          if (Date.now() >= until || signal?.aborted === true || closed) throw err;
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

/** One tools/call on a session, with progress and the call timeout (reset by progress). */
async function sendCall(
  client: Client,
  tool: string,
  args: JsonObject,
  call: UpstreamCallOptions,
  callTimeoutMs: number,
): Promise<CallToolResult> {
  const { onProgress, signal } = call;
  const result = await client.callTool(
    { name: tool, arguments: args, ...(call.meta === undefined ? {} : { _meta: call.meta }) },
    CallToolResultSchema,
    {
      signal,
      timeout: callTimeoutMs,
      resetTimeoutOnProgress: true,
      onprogress: onProgress === undefined ? undefined : (p) => onProgress(p.progress, p.total, p.message),
    },
  );
  return result as unknown as CallToolResult;
}

export function createUpstream(target: UpstreamTarget, options: UpstreamOptions = {}): Upstream {
  const name = describeTarget(target);
  const callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const listeners: (() => void)[] = [];
  const keeper = sessionKeeper({
    target,
    name,
    connectTimeoutMs,
    log: options.log ?? (() => undefined),
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
        try {
          return await sendCall(client, tool, args, call, callTimeoutMs);
        } catch (err) {
          if (call.signal?.aborted === true || !notTaken(err)) throw classify(err, call.signal);
          keeper.drop(client);
          if (Date.now() >= until)
            throw new UpstreamNotSentError(
              `the upstream did not take the call: ${err instanceof Error ? err.message : String(err)}`,
            );
          await new Promise((resolve) => setTimeout(resolve, RESEND_PAUSE_MS));
        }
      }
    },
    onToolsChanged: (listener) => {
      listeners.push(listener);
    },
    close: () => keeper.close(),
  };
}
