// A live status line on stderr (spinner, status, elapsed time) for a terminal; plain lines otherwise.
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface StatusLine {
  update(status: string, message?: string): void;
  pause(): void;
  stop(): void;
}

export function createStatusLine(label: string, enabled = process.stderr.isTTY === true): StatusLine {
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
      text = message === undefined ? status : `${status} — ${message}`;
      paused = false;
      if (enabled) draw();
      else if (text !== lastPrinted) {
        process.stderr.write(`${label}: ${text}\n`);
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
