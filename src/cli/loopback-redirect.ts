// The loopback redirect of a sign-in (RFC 8252 §7.3): a small HTTP server on 127.0.0.1, on a port the system picks,
// that the browser is sent back to with the authorization response.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuthFlowError } from '../client/oauth/types.js';

export const CALLBACK_PATH = '/callback';
/** How long a person has to approve in the browser by default. */
export const DEFAULT_REDIRECT_TIMEOUT_MS = 5 * 60_000;

export interface RedirectWait {
  /** The `state` of the authorization request: a response with another one is refused and waited past. */
  state?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface LoopbackRedirect {
  /** `http://127.0.0.1:PORT/callback`. */
  readonly redirectUri: string;
  /** Resolves with the URL of the first callback that carries the expected `state`; one wait at a time. */
  next(wait?: RedirectWait): Promise<URL>;
  close(): Promise<void>;
}

interface Waiter {
  state?: string;
  resolve(url: URL): void;
}

const HEADERS = {
  'content-type': 'text/plain; charset=utf-8',
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  connection: 'close',
} as const;

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, HEADERS).end(`${text}\n`);
}

/** What a request to the server gets; the callback the waiter expects settles it. */
function handle(req: IncomingMessage, res: ServerResponse, base: string, waiter: Waiter | undefined): void {
  // The request target appended to the base, never resolved against it: `//host/callback` is not the callback.
  let url: URL;
  try {
    url = new URL(`${base}${req.url ?? '/'}`);
  } catch {
    return answer(res, 400, 'Bad request.');
  }
  if (req.method !== 'GET') answer(res, 405, 'Method not allowed.');
  else if (url.pathname !== CALLBACK_PATH) answer(res, 404, 'Not found.');
  else if (waiter === undefined) answer(res, 400, 'No sign-in is waiting for this response.');
  else if (!url.searchParams.has('state'))
    answer(res, 400, 'This sign-in response has no state; it was not taken.');
  else if (waiter.state !== undefined && url.searchParams.get('state') !== waiter.state)
    answer(res, 400, 'This sign-in response belongs to another sign-in; it was not taken.');
  else {
    answer(res, 200, 'The sign-in response arrived. You can close this window and return to the terminal.');
    waiter.resolve(url);
  }
}

/** Starts the server; `host` is 127.0.0.1 unless a test says otherwise. */
export async function startLoopbackRedirect(host = '127.0.0.1'): Promise<LoopbackRedirect> {
  let waiter: Waiter | undefined;
  let base = '';
  const server = createServer((req, res) => handle(req, res, base, waiter));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A forgotten close never keeps the process alive; a wait's timer does, while it lasts.
  server.unref();
  const { port } = server.address() as AddressInfo;
  base = `http://${host}:${port}`;
  const redirectUri = `${base}${CALLBACK_PATH}`;

  const next = ({
    state,
    timeoutMs = DEFAULT_REDIRECT_TIMEOUT_MS,
    signal,
  }: RedirectWait = {}): Promise<URL> => {
    if (waiter !== undefined)
      return Promise.reject(new Error('a sign-in is already waiting for its response'));
    return new Promise<URL>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        waiter = undefined;
      };
      const onAbort = (): void => {
        done();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        done();
        const seconds = Math.round(timeoutMs / 1000);
        reject(new OAuthFlowError(`no sign-in response arrived at ${redirectUri} within ${seconds} s`));
      }, timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      waiter = {
        state,
        resolve: (url) => {
          done();
          resolve(url);
        },
      };
    });
  };

  const close = (): Promise<void> =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { redirectUri, next, close };
}
