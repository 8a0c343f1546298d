// Opens a URL in the person's browser, where there is one: the platform's opener, detached, its failures ignored
// (the URL is printed as well, so a browser that does not open costs nothing).
import { spawn } from 'node:child_process';

type Env = Readonly<Record<string, string | undefined>>;

/** Whether a browser can be shown: a desktop session (macOS or Windows not over SSH, X11 or Wayland elsewhere). */
export function hasDisplay(env: Env = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return true;
  if (platform !== 'darwin' && platform !== 'win32') return false;
  return !env.SSH_CONNECTION && !env.SSH_TTY;
}

/**
 * The opener's command line. On Windows, url.dll opens the URL without `cmd /c start`, which would read `&` and
 * `%VAR%` in the URL as its own syntax.
 */
export function openerCommand(url: string, platform: NodeJS.Platform = process.platform): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', url]];
  return ['xdg-open', [url]];
}

/** Starts the opener and lets it go; never throws. */
export function openBrowser(url: string, platform: NodeJS.Platform = process.platform): void {
  const [command, args] = openerCommand(url, platform);
  try {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined); // no opener installed: the printed URL is the way
    child.unref();
  } catch {
    // the same
  }
}
