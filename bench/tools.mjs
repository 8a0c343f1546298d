// Tool module for the benchmark (`serve --tools bench/tools.mjs`): task-only tools whose runs cost (next to) nothing.
// Plain JavaScript because `serve` imports it into the server under test, which runs without a TypeScript loader
// (its types are in tools.d.mts).

/**
 * Time to live of every task these tools run: a day, far beyond any benchmark run. Rows create tasks in their setup
 * and read, subscribe to or wait on them for the whole run; a task past its TTL fails ("task expired") and drops out
 * of tasks/get answers and subscriptions (a subscriptions/listen stream acknowledges and snapshots only live tasks).
 * A TTL of 10 minutes made the memory row's streams wait in vain for their snapshot 10 minutes into a default run.
 */
export const TASK_TTL_MS = 86_400_000;

/** The concurrency key (limit 1) that bench_hold's run keeps full and bench_queued's tasks wait for. */
export const SATURATED_KEY = 'saturated';

/** Runs of `bench_park` and `bench_hold` waiting to be released (by cancellation, shutdown or SIGTERM). */
const parked = new Set();
let releaseOnSigterm = false;

/** A run that waits until it is aborted or the server gets SIGTERM, then completes with "released". */
function parkUntilReleased(ctx) {
  return new Promise((resolve) => {
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
  });
}

export const tools = [
  {
    // The push-latency row: the task asks for input at once (the worker moves it to input_required); answering it
    // with tasks/update moves it to working, and the replay completes it. The result carries the monotonic clock
    // (CLOCK_MONOTONIC, shared by every process on the machine) at the moment the handler returned, just before
    // the worker commits the completion, so the harness can time the `completed` push from there.
    name: 'bench_input',
    description: 'Benchmark tool: runs only as a durable task, waits for one input, then completes.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS },
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
    task: { support: 'required', ttlMs: TASK_TTL_MS },
    handler: () => ({ content: [{ type: 'text', text: 'ok' }] }),
  },
  {
    // The sleeping-task rows: a durable sleep until `until` (epoch ms, the wall clock every process shares). The
    // first run stores the wait and ends; the run after the wake-up replays the sleep, which returns at once, and
    // reports how late it resumed by the server's own Date.now(), the clock its worker schedules wake-ups on.
    name: 'bench_sleep',
    description:
      'Benchmark tool: runs only as a durable task, sleeps until `until` (epoch ms), then completes.',
    inputSchema: { type: 'object', properties: { until: { type: 'number' } }, required: ['until'] },
    task: { support: 'required', ttlMs: TASK_TTL_MS },
    handler: async ({ until }, ctx) => {
      await ctx.sleepUntil('nap', until);
      return { content: [{ type: 'text', text: `late ${Date.now() - until}` }] };
    },
  },
  {
    // The retry-backoff row: the step fails once and the task waits an hour (jitter aside) for its second attempt,
    // which no benchmark run lives to see. Such a task is stored like a sleeping one (wake_at set, no lease).
    name: 'bench_retry',
    description: 'Benchmark tool: runs only as a durable task whose step fails and waits an hour to retry.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS },
    handler: async (_args, ctx) => {
      await ctx.step(
        'flaky',
        () => {
          throw new Error('bench: transient failure');
        },
        { retry: { maxAttempts: 3, initialDelayMs: 3_600_000, maxDelayMs: 3_600_000 } },
      );
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  },
  {
    name: 'bench_event',
    description:
      'Benchmark tool: runs only as a durable task that waits six hours for an event from outside.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS },
    handler: async (_args, ctx) => {
      const event = await ctx.waitForEvent('go', { timeoutMs: 6 * 3_600_000 });
      return { content: [{ type: 'text', text: event.received ? 'received' : 'timed out' }] };
    },
  },
  {
    // With `serve --concurrency 1` the first run occupies the worker's only slot for the whole benchmark, so
    // later tasks stay queued and the server does nothing but create them.
    name: 'bench_park',
    description:
      'Benchmark tool: runs only as a durable task and waits until it is aborted or the server stops.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS },
    handler: (_args, ctx) => parkUntilReleased(ctx),
  },
  {
    // The child-task rows: one step, then complete. Called on its own (the step row) and as the child of
    // bench_parent (the child row), so the two rows differ only by the child task's round trip.
    name: 'bench_step',
    description: 'Benchmark tool: runs only as a durable task, runs one step and completes.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS },
    handler: async (_args, ctx) => {
      const value = await ctx.step('work', () => 'ok');
      return { content: [{ type: 'text', text: value }] };
    },
  },
  {
    // The child-task row: calls bench_step as a child task (ctx.callTool) and completes with its result.
    name: 'bench_parent',
    description:
      'Benchmark tool: runs only as a durable task, calls bench_step as a child task and completes.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS },
    handler: async (_args, ctx) => ctx.callTool('bench_step', {}, { name: 'child' }),
  },
  {
    // The saturated-key row: the first run holds the only slot of SATURATED_KEY for the whole benchmark.
    name: 'bench_hold',
    description:
      'Benchmark tool: runs only as a durable task, holds the only slot of its concurrency key until it is aborted or the server stops.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS, concurrency: { limit: 1, key: SATURATED_KEY } },
    handler: (_args, ctx) => parkUntilReleased(ctx),
  },
  {
    // The saturated-key row: its tasks wait, parked, for the slot bench_hold never frees (were one to run, it would
    // complete at once).
    name: 'bench_queued',
    description:
      'Benchmark tool: runs only as a durable task, one at a time with bench_hold (same concurrency key); completes at once.',
    inputSchema: { type: 'object' },
    task: { support: 'required', ttlMs: TASK_TTL_MS, concurrency: { limit: 1, key: SATURATED_KEY } },
    handler: () => ({ content: [{ type: 'text', text: 'ok' }] }),
  },
];
