// A sign-in response pasted in the terminal: the address the browser was sent to, or just the code it carried, for a
// browser that cannot reach this host's loopback redirect (another machine, a container).
import { createInterface } from 'node:readline';
import { OAuthFlowError } from '../client/oauth/types.js';
import { printErr } from './terminal-text.js';

/**
 * The callback URL a pasted line stands for: a URL with `code` or `error` is taken as it is; a single word is taken as
 * the code, with the request's `state` (the person copied the code alone). Anything else: undefined.
 */
export function pastedRedirect(
  line: string,
  redirectUri: string,
  state: string | undefined,
): URL | undefined {
  const text = line.trim();
  if (text === '') return undefined;
  if (/^https?:\/\//i.test(text)) {
    try {
      const url = new URL(text);
      return url.searchParams.has('code') || url.searchParams.has('error') ? url : undefined;
    } catch {
      return undefined;
    }
  }
  if (/\s/.test(text)) return undefined;
  const url = new URL(redirectUri);
  url.searchParams.set('code', text);
  if (state !== undefined) url.searchParams.set('state', state);
  return url;
}

/** Reads lines from `input` until one is a sign-in response; rejects when the input ends first or on abort. */
export function readPastedRedirect(
  input: NodeJS.ReadableStream,
  redirectUri: string,
  state: string | undefined,
  signal?: AbortSignal,
): Promise<URL> {
  return new Promise<URL>((resolve, reject) => {
    const rl = createInterface({ input, terminal: false });
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      rl.close();
      fn();
    };
    const onAbort = (): void => settle(() => reject(signal?.reason));
    rl.on('line', (line) => {
      const url = pastedRedirect(line, redirectUri, state);
      if (url !== undefined) settle(() => resolve(url));
      else if (line.trim() !== '')
        printErr('That is not the address the browser was sent to, nor a code; paste it again:');
    });
    rl.on('close', () =>
      settle(() => reject(new OAuthFlowError('the input ended before a sign-in response was pasted'))),
    );
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
