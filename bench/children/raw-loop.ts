// What the raw baseline children report of one timed loop: statements, seconds, percentiles, CPU per statement.

export interface LoopResult {
  count: number;
  seconds: number;
  p50: number;
  p99: number;
  cpuUs: number;
}

/** Percentiles of the per-statement latencies (ms, sorted here) and this process's CPU time per statement (µs). */
export function loopResult(
  latencies: number[],
  seconds: number,
  cpu: NodeJS.CpuUsage,
  count = latencies.length,
): LoopResult {
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]! * 1000) / 1000;
  const cpuUs = Math.round(((cpu.user + cpu.system) / count) * 10) / 10;
  return { count, seconds, p50: pct(0.5), p99: pct(0.99), cpuUs };
}

/** Same shape as our `tasks` rows' payloads: a ~200-byte JSON text. */
export const PAYLOAD = JSON.stringify({
  arguments: { text: 'benchmark payload' },
  clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  statusMessage: 'The task is now in progress.',
  pad: 'x'.repeat(40),
});

/** Rows in the table the point-select loops read from. */
export const LOOKUP_ROWS = 10_000;

/** Shuffles in place (Fisher–Yates), so consecutive selects do not walk neighbouring pages. */
export function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** Answers the runner's `{ op, seconds }` messages with `time(op, seconds)`, or with the error. */
export function serveOps<Op>(
  ops: Record<string, Op>,
  time: (op: Op, seconds: number) => LoopResult | Promise<LoopResult>,
): void {
  process.on('message', (msg: { op: string; seconds: number }) => {
    void (async () => {
      try {
        const op = ops[msg.op];
        if (op === undefined) throw new Error(`unknown operation ${msg.op}`);
        process.send!({ type: 'result', ...(await time(op, msg.seconds)) });
      } catch (err) {
        process.send!({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
}
