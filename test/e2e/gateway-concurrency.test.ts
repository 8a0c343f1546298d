// `durable-mcp gateway --upstream-concurrency N`: every task of the upstream's tools takes a slot of one key per
// upstream, counted in the store, so the upstream never has more than N of the gateway's calls at once; the others
// wait, working, saying so, and run when a slot frees.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServeProcess } from '../support/cli.js';
import {
  callTool,
  gatewayDir,
  settled,
  startGateway,
  upstreamCalls,
  type GatewayDir,
  type Json,
} from '../support/gateway.js';
import { dropSchema, TEST_POSTGRES_URL, withPostgres } from '../support/postgres.js';

let at: GatewayDir;
let ends = '';
const procs: ServeProcess[] = [];

beforeEach(() => {
  at = gatewayDir(mkdtempSync(join(tmpdir(), 'durable-mcp-gateway-cap-')));
  ends = join(at.dir, 'ends.log');
});

afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.child.kill('SIGKILL');
    await p.exited;
  }
  rmSync(at.dir, { recursive: true, force: true });
});

/** When each slow_sum call ended upstream, by its arguments' `a`. */
const endedAt = (): Map<number, number> => {
  const lines = existsSync(ends) ? readFileSync(ends, 'utf8').split('\n').filter(Boolean) : [];
  return new Map(
    lines.map((line) => {
      const { args, at: end } = JSON.parse(line) as { args: { a: number }; at: number };
      return [args.a, end];
    }),
  );
};

/** A gateway capped at `n` calls at once, its upstream recording when each call ended. */
const cappedGateway = (n: number, store: string[] = []) =>
  startGateway(at, procs, {
    extra: [
      ...store,
      '--upstream-concurrency',
      String(n),
      '--upstream-env',
      'UPSTREAM_CALLS,UPSTREAM_CANCELS,UPSTREAM_ENDS',
    ],
    env: { UPSTREAM_ENDS: ends },
  });

/**
 * Two slow_sum tasks, created through `first` and `second`, both complete with their results, the second said it
 * waited for the slot or the first did, and the upstream processes' own record shows one call after the other.
 */
async function oneAtATime(first: ServeProcess, second: ServeProcess): Promise<void> {
  const one = await callTool(first, 'alice', 'slow_sum', { a: 1, b: 1, ms: 1_200 });
  const two = await callTool(second, 'alice', 'slow_sum', { a: 2, b: 3, ms: 1_200 });
  expect([one.status, two.status]).toEqual(['working', 'working']);
  const seen: string[] = [];
  const results = await Promise.all([
    settled(first, one.taskId as string, ['completed', 'failed'], seen, 30_000),
    settled(second, two.taskId as string, ['completed', 'failed'], seen, 30_000),
  ]);
  expect(results.map((t) => t.status)).toEqual(['completed', 'completed']);
  expect((results[1]?.result as Json).structuredContent).toEqual({ sum: 5 });
  // The task that waited said what it waited for while the other held the upstream's slot.
  expect(
    seen.some((m) =>
      /^Waiting for a free slot of concurrency key "upstream:node#[0-9a-f]{8}" to run\.$/.test(m),
    ),
  ).toBe(true);

  // What the upstream recorded: each call started after the other had ended.
  const calls = upstreamCalls(at, 'slow_sum');
  expect(calls).toHaveLength(2);
  const started = new Map(calls.map((c) => [(c.args as { a: number }).a, c.at as number]));
  const ended = endedAt();
  const [s1, e1, s2, e2] = [started.get(1), ended.get(1), started.get(2), ended.get(2)].map(Number);
  for (const t of [s1, e1, s2, e2]) expect(Number.isFinite(t)).toBe(true);
  expect(Number(s2) >= Number(e1) || Number(s1) >= Number(e2)).toBe(true);
}

describe('durable-mcp gateway --upstream-concurrency', () => {
  it('with 1, the upstream never has two of its calls at once: the second task waits for the slot, then runs', async () => {
    const gw = await cappedGateway(1);
    await oneAtATime(gw, gw);
  });
});

const SCHEMA = `dmcp_gateway_cap_${randomBytes(5).toString('hex')}`;

await withPostgres('the gateway cap across PostgreSQL replicas', () => {
  afterAll(() => dropSchema(SCHEMA));

  describe('durable-mcp gateway --upstream-concurrency on PostgreSQL replicas', () => {
    it('with 1, two replicas, each with its own upstream process, never have two calls out at once', async () => {
      const store = ['--store', TEST_POSTGRES_URL, '--pg-schema', SCHEMA, '--pg-pool-size', '3'];
      const a = await cappedGateway(1, store);
      const b = await cappedGateway(1, store);
      await oneAtATime(a, b);
    });
  });
});
