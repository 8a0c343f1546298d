// HTTP helpers of the harness: one request with fetch, one timed POST over node:http, and the result check.
import { request as httpRequest, type Agent } from 'node:http';
import type { LoadRequest, TargetView } from '../types.js';

export interface Answer {
  status: number;
  text: string;
}

/** A JSON-RPC answer as the harness reads it (only the fields it looks at). */
export interface JsonRpcAnswer {
  result?: Record<string, unknown> & { taskId?: string; status?: string; resultType?: string };
  error?: { code?: number };
}

export const parseAnswer = (text: string): JsonRpcAnswer => JSON.parse(text) as JsonRpcAnswer;

/** The result of an answer that expectJsonRpcResult accepted. */
export const resultOf = (text: string): NonNullable<JsonRpcAnswer['result']> => parseAnswer(text).result!;

/** The first text content of a tool result, or ''. */
export function firstText(result: unknown): string {
  const content = (result as { content?: Array<{ text?: unknown }> } | undefined)?.content;
  const text = content?.[0]?.text;
  return typeof text === 'string' ? text : '';
}

export function expectJsonRpcResult(status: number, text: string): string | undefined {
  if (status !== 200) return `HTTP ${status} (expected 200): ${text.slice(0, 300)}`;
  let message: { error?: unknown; result?: unknown } | null;
  try {
    message = JSON.parse(text) as typeof message;
  } catch {
    return `response is not a single JSON document: ${text.slice(0, 300)}`;
  }
  if (message?.error !== undefined) return `JSON-RPC error ${JSON.stringify(message.error)}`;
  if (typeof message?.result !== 'object' || message.result === null) return `no JSON-RPC result: ${text}`;
  if ((message.result as { isError?: unknown }).isError === true) {
    return `tool reported isError: ${text.slice(0, 300)}`;
  }
  return undefined;
}

/** Sends one request (autocannon options shape) with fetch to the target (its first replica). */
export function send(target: TargetView, req: LoadRequest): Promise<Answer> {
  return sendTo(target.url, req);
}

export async function sendTo(url: string, req: LoadRequest): Promise<Answer> {
  const res = await fetch(new URL(req.path ?? '/', url), {
    method: req.method,
    headers: req.headers,
    body: req.body,
  });
  return { status: res.status, text: await res.text() };
}

/**
 * One request over node:http (keep-alive `agent`), the client whose timing the latency rows use: a POST of its body,
 * or another method (a GET of the operator API) to `url` resolved against the request's path.
 */
export function post(agent: Agent, url: string, req: LoadRequest): Promise<Answer> {
  const body = req.body ?? '';
  const method = req.method || 'POST';
  const headers =
    method === 'GET' ? req.headers : { ...req.headers, 'content-length': Buffer.byteLength(body) };
  const to = method === 'POST' ? url : new URL(req.path ?? '/', url);
  return new Promise((resolvePost, reject) => {
    const r = httpRequest(to, { method, agent, ...(headers === undefined ? {} : { headers }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolvePost({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    r.on('error', reject);
    if (method === 'GET') r.end();
    else r.end(body);
  });
}

export const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
