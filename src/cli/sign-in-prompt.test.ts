import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAuthFlowError } from '../client/oauth/types.js';
import {
  createTerminalSignInPrompt,
  promptOptionsFromFlags,
  type TerminalSignInPrompt,
} from './sign-in-prompt.js';

const AUTHORIZE = 'https://as.example/authorize?client_id=c&state=s-123&code_challenge=x';
let prompt: TerminalSignInPrompt | undefined;
let printed: string[] = [];

afterEach(async () => {
  await prompt?.close();
  prompt = undefined;
  vi.restoreAllMocks();
});

async function started(options: Partial<Parameters<typeof createTerminalSignInPrompt>[0]> = {}) {
  printed = [];
  vi.spyOn(console, 'error').mockImplementation((line: string) => void printed.push(line));
  prompt = createTerminalSignInPrompt({ browser: false, paste: false, device: false, ...options });
  await prompt.start();
  return prompt;
}

/** The status of a GET with `target` as its request target, as sent (fetch would normalise it). */
function rawStatus(redirectUri: string, target: string): Promise<number> {
  const { port } = new URL(redirectUri);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    );
    let head = '';
    socket.on('data', (c: Buffer) => (head += c.toString()));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1])));
    socket.on('error', reject);
  });
}

const request = (p: TerminalSignInPrompt, url = AUTHORIZE, signal?: AbortSignal) => ({
  url: new URL(url),
  redirectUri: p.redirectUri,
  signal,
});

describe('the terminal sign-in prompt', () => {
  it('listens on 127.0.0.1 at /callback and resolves with the URL the browser is sent back to', async () => {
    const opened: string[] = [];
    const p = await started({ browser: true, openUrl: (url) => void opened.push(url) });
    expect(p.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const result = p.authorize(request(p));
    const back = `${p.redirectUri}?code=abc&state=s-123&iss=https%3A%2F%2Fas.example`;
    const res = await fetch(back);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/You can close this window/);
    expect((await result).href).toBe(back);
    expect(opened).toEqual([AUTHORIZE]);
    expect(printed).toEqual([`Open this URL to sign in: ${AUTHORIZE}`]);
  });

  it('refuses a callback without state, or with another state, and keeps waiting', async () => {
    const p = await started();
    const result = p.authorize(request(p));
    expect((await fetch(`${p.redirectUri}?code=abc`)).status).toBe(400);
    expect((await fetch(`${p.redirectUri}?code=abc&state=other`)).status).toBe(400);
    expect((await fetch(p.redirectUri.replace('/callback', '/elsewhere?state=s-123'))).status).toBe(404);
    expect(await rawStatus(p.redirectUri, '//elsewhere/callback?code=abc&state=s-123')).toBe(404);
    expect(await rawStatus(p.redirectUri, 'http://[/callback?state=s-123')).toBe(400);
    expect((await fetch(`${p.redirectUri}?error=access_denied&state=s-123`)).status).toBe(200);
    expect((await result).searchParams.get('error')).toBe('access_denied');
  });

  it('times out with an OAuthFlowError when no response arrives', async () => {
    const p = await started({ timeoutMs: 50 });
    const result = p.authorize(request(p));
    await expect(result).rejects.toBeInstanceOf(OAuthFlowError);
    await expect(result).rejects.toThrow(/no sign-in response arrived/);
  });

  it('stops waiting when the request is aborted', async () => {
    const p = await started();
    const abort = new AbortController();
    const result = p.authorize(request(p, AUTHORIZE, abort.signal));
    abort.abort(new Error('given up'));
    await expect(result).rejects.toThrow('given up');
  });

  it('prints the URL with its control characters escaped, and only the URL', async () => {
    const p = await started();
    const result = p.authorize(request(p, 'https://as.example/authorize?state=s-123&x=\u001b[2J\u202e'));
    await fetch(`${p.redirectUri}?code=abc&state=s-123`);
    await result;
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatch(/^Open this URL to sign in: https:\/\/as\.example\/authorize\?state=s-123&x=/);
    // eslint-disable-next-line no-control-regex -- the characters looked for
    expect(printed[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
  });

  it('takes a pasted code with the request state, or a pasted address', async () => {
    const input = new PassThrough();
    const p = await started({ paste: true, input });
    const result = p.authorize(request(p));
    input.write('not a code\n');
    input.write('the-code\n');
    const url = await result;
    expect(url.searchParams.get('code')).toBe('the-code');
    expect(url.searchParams.get('state')).toBe('s-123');
    expect(printed.join('\n')).not.toMatch(/the-code/);

    const again = p.authorize(request(p));
    input.write('http://127.0.0.1:1/callback?code=c2&state=s-123\n');
    expect((await again).searchParams.get('code')).toBe('c2');
  });

  it('leaves the redirect to decide when the pasted input ends', async () => {
    const input = new PassThrough();
    const p = await started({ paste: true, input });
    const result = p.authorize(request(p));
    input.end();
    await new Promise((r) => setTimeout(r, 20));
    await fetch(`${p.redirectUri}?code=abc&state=s-123`);
    expect((await result).searchParams.get('code')).toBe('abc');
  });

  it('falls back to pasting when no loopback server can listen', async () => {
    const input = new PassThrough();
    const p = await started({ input, listen: () => Promise.reject(new Error('EACCES')) });
    expect(p.redirectUri).toBe('http://127.0.0.1/callback');
    const result = p.authorize(request(p));
    input.end('code-1\n');
    expect((await result).href).toBe('http://127.0.0.1/callback?code=code-1&state=s-123');
  });

  it('times out a pasted answer too when there is no loopback server', async () => {
    const input = new PassThrough();
    const p = await started({ input, timeoutMs: 50, listen: () => Promise.reject(new Error('EACCES')) });
    await expect(p.authorize(request(p))).rejects.toThrow(/no sign-in response arrived within/);
  });

  it('shows a device code only when the device grant is allowed', async () => {
    expect((await started()).device).toBeUndefined();
    await prompt?.close();
    const p = await started({ device: true });
    await p.device?.({
      verificationUri: 'https://as.example/device',
      userCode: 'WDJB-MJHT',
      expiresInSeconds: 600,
    });
    expect(printed[0]).toBe('To sign in, open https://as.example/device and enter the code WDJB-MJHT');
    expect(printed.join('\n')).toMatch(/expires in 10 minutes/);
  });

  it('has no redirect URI before it is started', () => {
    const p = createTerminalSignInPrompt({ browser: false, paste: false, device: false });
    expect(() => p.redirectUri).toThrow(/not started/);
  });
});

describe('the ways of asking that the flags allow', () => {
  it('opens a browser where there is a display, unless --no-browser', () => {
    expect(promptOptionsFromFlags({}, true, true)).toEqual({ browser: true, paste: false, device: false });
    expect(promptOptionsFromFlags({ 'no-browser': true }, true, false)).toEqual({
      browser: false,
      paste: false,
      device: false,
    });
  });

  it('offers pasting on a terminal without a browser, and the device grant without a display', () => {
    expect(promptOptionsFromFlags({ 'no-browser': true }, true, true).paste).toBe(true);
    expect(promptOptionsFromFlags({}, false, true)).toEqual({ browser: false, paste: true, device: true });
    expect(promptOptionsFromFlags({ paste: true }, false, false)).toEqual({
      browser: false,
      paste: true,
      device: false,
    });
    expect(promptOptionsFromFlags({ device: true }, true, true).device).toBe(true);
  });
});
