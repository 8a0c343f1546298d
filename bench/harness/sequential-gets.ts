// Sequential round trips: one request at a time over one keep-alive connection, each timed.
import { Agent } from 'node:http';
import { latencySample, nsToMs } from '../stats.js';
import type { LatencySample, LoadRequest, TargetView } from '../types.js';
import { post } from './http.js';

/**
 * Sends the `i`-th request of `requestAt(i)` one at a time over one keep-alive connection for `seconds`, timing
 * each round trip; every answer must be HTTP 200, and the run's first must pass `checkFirst` (a problem, or
 * undefined), checked outside the timed round trips.
 */
export async function timeSequentialGets(
  target: TargetView,
  seconds: number,
  requestAt: (i: number) => LoadRequest,
  checkFirst?: (text: string) => string | undefined,
): Promise<LatencySample> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  try {
    const started = process.hrtime.bigint();
    const end = started + BigInt(Math.round(seconds * 1e9));
    let now = started;
    for (let i = 0; now < end; i++) {
      const req = requestAt(i);
      const res = await post(agent, target.url, req);
      const after = process.hrtime.bigint();
      const what = req.headers?.['mcp-method'] ?? `${req.method} ${req.path ?? ''}`;
      if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status}: ${res.text.slice(0, 300)}`);
      const problem = i === 0 ? checkFirst?.(res.text) : undefined;
      if (problem !== undefined) throw new Error(`${what}: ${problem}`);
      latencies.push(nsToMs(after - now));
      now = i === 0 && checkFirst !== undefined ? process.hrtime.bigint() : after;
    }
    return latencySample(latencies, nsToMs(now - started) / 1000);
  } finally {
    agent.destroy();
  }
}
