// Preloaded (node --import) into the `serve` children of the clock section: Date.now() becomes the real time plus
// an offset the suite writes to the file named by DURABLE_MCP_CHAOS_CLOCK and announces with SIGUSR2 — what a
// wall-clock jump looks like to a process. Timers and performance.now() keep the monotonic clock, as in a real jump.
// Nothing of the product changes: without the variable this module does nothing.
import { readFileSync } from 'node:fs';

const file = process.env.DURABLE_MCP_CHAOS_CLOCK;
if (file) {
  const realNow = Date.now.bind(Date);
  let offset = 0;
  const load = (): void => {
    try {
      offset = Number(readFileSync(file, 'utf8').trim()) || 0;
    } catch {
      // keep the last offset
    }
  };
  load();
  Date.now = () => realNow() + offset;
  process.on('SIGUSR2', load);
}
