// POSTing to an MCP endpoint with fetch and reading the answer as JSON-RPC messages (a JSON body or the `data:`
// payloads of an SSE stream). Shared by the tests and the reliability suite (scripts/chaos/fuzz/).

export interface PostResult {
  status: number;
  headers: Headers;
  text: string;
  /** JSON-RPC messages of the body: the JSON value, or every SSE `data:` payload in order. */
  messages: unknown[];
  /** Set when a body (or an SSE data payload) was not valid JSON. */
  jsonError?: string;
  /** True when an SSE stream was still open when `timeoutMs` elapsed (the request was then aborted). */
  truncated: boolean;
  contentType: string;
}

export interface PostOptions {
  /** Overall budget; for SSE responses the stream is cut (truncated: true) when it elapses. Default 10 s. */
  timeoutMs?: number;
  /** For SSE responses: cut the stream (truncated: true) this long after the response headers arrived. */
  sseTimeoutMs?: number;
  method?: string;
}

const DEFAULT_HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** Header map for requests: undefined removes a default header, an array sends the header several times. */
export type HeaderInit = Record<string, string | readonly string[] | undefined>;

/** The default JSON headers overridden by `headers` (names lower-cased). */
export function withDefaults(headers: HeaderInit): HeaderInit {
  const merged: HeaderInit = { ...DEFAULT_HEADERS };
  for (const [k, v] of Object.entries(headers)) merged[k.toLowerCase()] = v;
  return merged;
}

export function mergeHeaders(headers: HeaderInit): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(withDefaults(headers))) {
    if (v === undefined) continue;
    if (typeof v === 'string') out.set(k, v);
    else for (const item of v) out.append(k, item);
  }
  return out;
}

/** Parses SSE text into the JSON payloads of its events (comments, non-data fields and empty events ignored). */
export function parseSse(text: string): { messages: unknown[]; jsonError?: string } {
  const messages: unknown[] = [];
  let jsonError: string | undefined;
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    // An event without data (a priming event that only carries an id) is no message, as in EventSource.
    if (data.length === 0 || data.join('\n') === '') continue;
    try {
      messages.push(JSON.parse(data.join('\n')));
    } catch (err) {
      jsonError ??= `invalid JSON in SSE data: ${String(err)}`;
    }
  }
  return jsonError === undefined ? { messages } : { messages, jsonError };
}

/** The JSON-RPC messages of a response body of the given content type (an empty body holds none). */
export function parseBody(contentType: string, text: string): { messages: unknown[]; jsonError?: string } {
  if (contentType.startsWith('text/event-stream')) return parseSse(text);
  if (text.length === 0) return { messages: [] };
  try {
    return { messages: [JSON.parse(text)] };
  } catch (err) {
    return { messages: [], jsonError: `invalid JSON body: ${String(err)}` };
  }
}

/** POSTs a body (string, JSON value or raw bytes) with default JSON headers merged with `headers`. */
export async function post(
  url: string,
  body: string | object | Uint8Array,
  headers: HeaderInit = {},
  options: PostOptions = {},
): Promise<PostResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const controller = new AbortController();
  let timer = setTimeout(() => controller.abort(), timeoutMs);
  const payload: string | Uint8Array =
    typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  try {
    const res = await fetch(url, {
      method: options.method ?? 'POST',
      headers: mergeHeaders(headers),
      body: options.method === 'GET' || options.method === 'HEAD' ? undefined : payload,
      signal: controller.signal,
    });
    const contentType = res.headers.get('content-type') ?? '';
    if (options.sseTimeoutMs !== undefined && contentType.startsWith('text/event-stream')) {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(), options.sseTimeoutMs);
    }
    const chunks: Uint8Array[] = [];
    let truncated = false;
    if (res.body !== null) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
        }
      } catch (err) {
        if (!controller.signal.aborted || !contentType.startsWith('text/event-stream')) throw err;
        truncated = true;
      }
    }
    const text = Buffer.concat(chunks).toString('utf8');
    return {
      status: res.status,
      headers: res.headers,
      text,
      truncated,
      contentType,
      ...parseBody(contentType, text),
    };
  } finally {
    clearTimeout(timer);
  }
}
