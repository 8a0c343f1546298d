// A small JSON-RPC client over node:http (no fetch: the suite needs agents, resets and torn-down requests), and
// plain GETs of the server's other paths.
import { Agent, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parseBody } from '../../../test/support/http.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  nameFor,
  PROTOCOL_VERSION,
} from '../../../test/support/protocol.js';
import { TASK_CAPS } from './paths.js';

export type Json = Record<string, unknown>;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** The fields of results the suite reads (a task snapshot, a task handle, a listing); the rest stays opaque. */
export interface RpcAnswer {
  resultType?: string;
  taskId?: string;
  status?: string;
  statusMessage?: string;
  pollIntervalMs?: number;
  createdAt?: string;
  inputRequests?: Record<string, unknown>;
  result?: { content?: unknown };
  error?: unknown;
  [field: string]: unknown;
}

/** What a request came to; never an exception. */
export interface RpcResult {
  status?: number | undefined;
  result?: RpcAnswer;
  error?: RpcError;
  /** A refused, reset or timed-out connection (or 'dropped' on purpose, or 'stopped' when no server is up). */
  netError?: string;
  /** A body that is not JSON-RPC (its start). */
  badBody?: string;
  droppedAt?: 'sent' | 'answer';
  reusedSocket?: boolean;
  ms: number;
}

export interface RpcOptions {
  caps?: unknown;
  timeoutMs?: number;
  agent?: Agent;
  /** Fields added to the request's `_meta`. */
  meta?: Json;
  /** Plays a client whose answer gets lost (see rpc). */
  drop?: { afterMs?: number } | undefined;
  /** Retries once a reset of a reused kept-alive socket (see rpc). */
  retryReused?: boolean;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string;
}

let nextId = 1;
/** A fresh request id, shared by every request of the suite. */
export const nextRequestId = (): number => nextId++;

export const defaultAgent = new Agent({ keepAlive: true, maxSockets: 64 });

export function envelope(caps: unknown = TASK_CAPS): Json {
  return {
    [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
    [META_CLIENT_CAPABILITIES]: caps,
    [META_CLIENT_INFO]: { name: 'durable-mcp-chaos', version: '0.0.0' },
  };
}

const codeOf = (err: Error & { code?: string }): string => err.code ?? err.message;

/**
 * One JSON-RPC request. Never throws: resolves `{status, result?, error?, netError?, ms}` (`netError` for a
 * refused, reset or timed-out connection, `badBody` for a body that is not JSON-RPC). With `retryReused`, a reset
 * of a kept-alive socket the server had just closed as idle is retried once on a fresh connection (the request
 * never reached the server); never use it where a process may have died mid-request. `meta` adds fields to the
 * request's `_meta`. `drop` plays a client whose answer gets lost: the request is torn down unread `drop.afterMs`
 * after its body was sent, or as soon as the answer begins, whichever comes first; it resolves
 * `{netError: 'dropped', droppedAt: 'sent' | 'answer'}`.
 */
export async function rpc(
  url: string,
  method: string,
  params: Json = {},
  options: RpcOptions = {},
): Promise<RpcResult> {
  const first = await rpcOnce(url, method, params, options);
  if (options.retryReused && first.reusedSocket && first.netError === 'ECONNRESET') {
    return rpcOnce(url, method, params, options);
  }
  return first;
}

function requestHeaders(method: string, params: Json, body: string, token?: string): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'content-length': Buffer.byteLength(body),
    'mcp-protocol-version': PROTOCOL_VERSION,
    'mcp-method': method,
  };
  const name = nameFor(method, params);
  if (name !== undefined) headers['mcp-name'] = name;
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  return headers;
}

/** Reads a whole answer as one JSON-RPC message (the last one of an SSE stream). */
function readAnswer(res: IncomingMessage, done: (value: Omit<RpcResult, 'ms'>) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('error', (err) => done({ status: res.statusCode, netError: codeOf(err) }));
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    const { messages, jsonError } = parseBody(String(res.headers['content-type'] ?? ''), text);
    const msg = messages[messages.length - 1];
    if (jsonError !== undefined || msg === undefined || msg === null || typeof msg !== 'object') {
      done({ status: res.statusCode, badBody: text.slice(0, 300) });
    } else {
      const { result, error } = msg as { result?: RpcAnswer; error?: RpcError };
      done({ status: res.statusCode, result, error });
    }
  });
}

function rpcOnce(url: string, method: string, params: Json, options: RpcOptions): Promise<RpcResult> {
  const { caps = TASK_CAPS, timeoutMs = 15_000, agent = defaultAgent, meta, drop, token } = options;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: nextRequestId(),
    method,
    params: { ...params, _meta: { ...envelope(caps), ...meta } },
  });
  const headers = requestHeaders(method, params, body, token);
  const started = performance.now();
  return new Promise((resolveRpc) => {
    let settled = false;
    const done = (value: Omit<RpcResult, 'ms'>): void => {
      if (settled) return;
      settled = true;
      resolveRpc({ ...value, ms: performance.now() - started });
    };
    const req = httpRequest(url, { method: 'POST', agent, headers }, (res) => {
      if (drop !== undefined) {
        done({ status: res.statusCode, netError: 'dropped', droppedAt: 'answer' });
        req.destroy();
        return;
      }
      readAnswer(res, done);
    });
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
      timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => done({ netError: codeOf(err), reusedSocket: req.reusedSocket }));
    req.end(body, () => {
      if (drop === undefined) return;
      setTimeout(() => {
        if (settled) return;
        done({ netError: 'dropped', droppedAt: 'sent' });
        req.destroy();
      }, drop.afterMs ?? 0);
    });
  });
}

export interface GetResult {
  status?: number | undefined;
  text?: string;
  netError?: string;
  ms: number;
}

/** GET a path (e.g. /healthz) on the server of `url`; resolves `{status, text, ms}` or `{netError, ms}`. */
export function httpGet(
  url: string,
  path: string,
  { timeoutMs = 5_000, agent = defaultAgent }: { timeoutMs?: number; agent?: Agent } = {},
): Promise<GetResult> {
  const target = new URL(path, url);
  const started = performance.now();
  return new Promise((resolveGet) => {
    const req = httpRequest(target, { method: 'GET', agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => resolveGet({ netError: codeOf(err), ms: performance.now() - started }));
      res.on('end', () =>
        resolveGet({
          status: res.statusCode,
          text: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
    });
    const timer = setTimeout(
      () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })),
      timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => resolveGet({ netError: codeOf(err), ms: performance.now() - started }));
    req.end();
  });
}
