// Tool module for the benchmark (`serve --tools bench/tools.mjs`): task-only tools whose runs cost nothing.

/** Runs of `bench_park` waiting to be released (by cancellation, shutdown or SIGTERM). */
const parked = new Set();
let releaseOnSigterm = false;

export const tools = [
  {
    name: 'bench_task',
    description: 'Benchmark tool: runs only as a durable task and completes at once with "ok".',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: 600_000 },
    handler: () => ({ content: [{ type: 'text', text: 'ok' }] }),
  },
  {
    // With `serve --concurrency 1` the first run occupies the worker's only slot for the whole benchmark, so
    // later tasks stay queued and the server does nothing but create them.
    name: 'bench_park',
    description:
      'Benchmark tool: runs only as a durable task and waits until it is aborted or the server stops.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: 600_000 },
    handler: (_args, ctx) =>
      new Promise((resolve) => {
        const release = () => {
          parked.delete(release);
          resolve({ content: [{ type: 'text', text: 'released' }] });
        };
        parked.add(release);
        ctx.signal.addEventListener('abort', release, { once: true });
        if (!releaseOnSigterm) {
          releaseOnSigterm = true;
          // The worker gives running tasks a grace period on shutdown; release them at once instead.
          process.once('SIGTERM', () => [...parked].forEach((r) => r()));
        }
      }),
  },
];
