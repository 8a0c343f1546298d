// A live status line on stderr (spinner, status, elapsed time) for a terminal; plain lines otherwise. It writes its
// own control sequences (return, erase the line); the label and the server's status text are escaped.
/* eslint-disable no-restricted-syntax -- the status line's own control sequences around escaped text */
import { oneLine, printErr, terminalLine } from './terminal-text.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface StatusLine {
  update(status: string, message?: string): void;
  pause(): void;
  stop(): void;
}

export function createStatusLine(name: string, enabled = process.stderr.isTTY === true): StatusLine {
  const label = terminalLine(name);
  const started = Date.now();
  let frame = 0;
  let text = '';
  let lastPrinted = '';
  let paused = false;
  const draw = (): void => {
    if (paused) return;
    const secs = Math.floor((Date.now() - started) / 1000);
    process.stderr.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${label} · ${text} · ${secs}s`);
  };
  const timer = enabled ? setInterval(draw, 100) : undefined;
  timer?.unref();
  return {
    update(status, message) {
      text = message === undefined ? terminalLine(status) : oneLine`${status} — ${message}`;
      paused = false;
      if (enabled) draw();
      else if (text !== lastPrinted) {
        printErr(`${label}: ${text}`);
        lastPrinted = text;
      }
    },
    pause() {
      paused = true;
      if (enabled) process.stderr.write('\r\x1b[2K');
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      if (enabled) process.stderr.write('\r\x1b[2K');
    },
  };
}
