// How the CLI asks a person to approve a sign-in: it prints the authorization URL (and opens the browser where there
// is one), then takes the response from its loopback redirect, or pasted in the terminal, or it shows a device code.
import type { AuthorizationRequest, DeviceAuthorizationPrompt, SignInPrompt } from '../client/oauth/types.js';
import { OAuthFlowError } from '../client/oauth/types.js';
import {
  CALLBACK_PATH,
  DEFAULT_REDIRECT_TIMEOUT_MS,
  startLoopbackRedirect,
  type LoopbackRedirect,
} from './loopback-redirect.js';
import { hasDisplay, openBrowser } from './open-browser.js';
import { readPastedRedirect } from './pasted-redirect.js';
import { oneLine, printErr } from './terminal-text.js';

export interface TerminalPromptOptions {
  /** Open the authorization URL in a browser (it is printed either way). */
  browser: boolean;
  /** Also take the response pasted on `input`: the address the browser was sent to, or the code. */
  paste: boolean;
  /** Use the device authorization grant where the authorization server offers it. */
  device: boolean;
  /** How long to wait for the response (default 5 minutes). */
  timeoutMs?: number;
  input?: NodeJS.ReadableStream;
  openUrl?: (url: string) => void;
  listen?: () => Promise<LoopbackRedirect>;
}

/** A {@link SignInPrompt} whose loopback server runs between `start()` and `close()`. */
export interface TerminalSignInPrompt extends SignInPrompt {
  /** Starts the loopback redirect (once; later calls wait for the same start); `redirectUri` is known after. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Where the browser is sent when no loopback server could listen: the person pastes the address it shows. */
const NO_LOOPBACK_URI = `http://127.0.0.1${CALLBACK_PATH}`;

const never = new Promise<never>(() => undefined);

/** Rejects after `ms` (the bound of a pasted answer when there is no loopback server to time out), unless aborted. */
function expiry(ms: number, signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    const timer = setTimeout(
      () => reject(new OAuthFlowError(`no sign-in response arrived within ${Math.round(ms / 1000)} s`)),
      ms,
    );
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });
}

/** Which ways of asking the flags and the terminal allow: `--no-browser`, `--paste`, `--device`. */
export function promptOptionsFromFlags(
  values: Record<string, unknown>,
  display = hasDisplay(),
  stdinIsTerminal = process.stdin.isTTY === true,
): TerminalPromptOptions {
  const browser = values['no-browser'] !== true && display;
  const paste = values.paste === true || (!browser && stdinIsTerminal);
  // Without a display, the device grant needs no browser on this host; --no-browser and --paste ask for the redirect.
  const device =
    values.device === true || (!display && values['no-browser'] !== true && values.paste !== true);
  return { browser, paste, device };
}

function showDevice(prompt: DeviceAuthorizationPrompt, open?: (url: string) => void): void {
  const minutes = Math.max(1, Math.round(prompt.expiresInSeconds / 60));
  printErr(oneLine`To sign in, open ${prompt.verificationUri} and enter the code ${prompt.userCode}`);
  if (prompt.verificationUriComplete !== undefined)
    printErr(oneLine`  (or open ${prompt.verificationUriComplete})`);
  printErr(`  The code expires in ${minutes} minute${minutes === 1 ? '' : 's'}; waiting for the approval…`);
  open?.(prompt.verificationUriComplete ?? prompt.verificationUri);
}

export function createTerminalSignInPrompt(options: TerminalPromptOptions): TerminalSignInPrompt {
  const open = options.browser ? (options.openUrl ?? openBrowser) : undefined;
  const input = options.input ?? process.stdin;
  let starting: Promise<LoopbackRedirect | undefined> | undefined;
  let loopback: LoopbackRedirect | undefined;

  async function authorize(request: AuthorizationRequest): Promise<URL> {
    const state = request.url.searchParams.get('state') ?? undefined;
    const paste = options.paste || loopback === undefined;
    printErr(oneLine`Open this URL to sign in: ${request.url.href}`);
    if (paste) printErr('Then paste here the address the browser was sent to (or the code it shows):');
    open?.(request.url.href);
    const stop = new AbortController();
    const signal = request.signal ? AbortSignal.any([request.signal, stop.signal]) : stop.signal;
    const wait = { state, timeoutMs: options.timeoutMs, signal };
    const redirected =
      loopback?.next(wait) ?? expiry(options.timeoutMs ?? DEFAULT_REDIRECT_TIMEOUT_MS, signal);
    // With a loopback server too, input that ends (nothing to paste) leaves the redirect to decide.
    const pasted = paste
      ? readPastedRedirect(input, request.redirectUri, state, signal).catch((err: unknown) =>
          loopback === undefined || signal.aborted ? Promise.reject(err) : never,
        )
      : never;
    try {
      return await Promise.race([redirected, pasted]);
    } finally {
      stop.abort();
    }
  }

  const prompt: TerminalSignInPrompt = {
    get redirectUri(): string {
      if (starting === undefined) throw new Error('the sign-in prompt was not started');
      return loopback?.redirectUri ?? NO_LOOPBACK_URI;
    },
    authorize,
    async start() {
      starting ??= (options.listen ?? startLoopbackRedirect)().catch(() => undefined);
      loopback = await starting;
    },
    async close() {
      const closing = loopback;
      starting = undefined;
      loopback = undefined;
      await closing?.close();
    },
  };
  if (options.device) prompt.device = (p) => showDevice(p, open);
  return prompt;
}
