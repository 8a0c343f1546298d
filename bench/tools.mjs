// Tool module for the benchmark (`serve --tools bench/tools.mjs`): task-only tools whose runs cost nothing.

/** Runs of `bench_park` waiting to be released (by cancellation, shutdown or SIGTERM). */
const parked = new Set();
let releaseOnSigterm = false;

export const tools = [
  {
    // The push-latency row: the task asks for input at once (the worker moves it to input_required); answering it
    // with tasks/update moves it to working, and the replay completes it. The result carries the monotonic clock
    // (CLOCK_MONOTONIC, shared by every process on the machine) at the moment the handler returned, just before
    // the worker commits the completion, so the harness can time the `completed` push from there.
    name: 'bench_input',
    description: 'Benchmark tool: runs only as a durable task, waits for one input, then completes.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: 600_000 },
    handler: (_args, ctx) => {
      ctx.input('go', {
        method: 'elicitation/create',
        params: { message: 'go?', requestedSchema: { type: 'object', properties: {} } },
      });
      return { content: [{ type: 'text', text: `done ${process.hrtime.bigint()}` }] };
    },
  },
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
