// Load generation: autocannon runs against a target, one instance per replica.
import autocannon from 'autocannon';
import { round1, sum } from '../stats.js';
import type { LoadRequest, Params, Target, ThroughputSample } from '../types.js';

type AutocannonResult = Awaited<ReturnType<typeof autocannon>>;

function toSample(result: AutocannonResult): ThroughputSample {
  return {
    rps: round1(result['2xx'] / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: result.duration,
  };
}

/**
 * One autocannon run of `duration` seconds (or of `params.amount` requests); against several replicas, one
 * autocannon instance per replica at the same time, the connections (and requests) split evenly among them
 * (round-robin), their counts added up and the largest p50/p99 kept.
 */
export async function loadRun(
  req: LoadRequest,
  target: Target,
  params: Pick<Params, 'connections' | 'pipelining' | 'amount'>,
  duration: number,
): Promise<ThroughputSample> {
  const n = target.urls.length;
  // A run of `amount` requests ends on autocannon's first sample after its last answer: every 0.1 s, not 1 s.
  const length =
    params.amount === undefined ? { duration } : { amount: Math.ceil(params.amount / n), sampleInt: 100 };
  const results = await Promise.all(
    target.urls.map((url, i) =>
      autocannon({
        ...req,
        url: new URL(req.path ?? '/', url).href,
        connections: Math.floor(params.connections / n) + (i < params.connections % n ? 1 : 0),
        pipelining: params.pipelining,
        ...length,
      }),
    ),
  );
  const samples = results.map(toSample);
  if (samples.length === 1) return samples[0]!;
  const total = (field: 'rps' | 'ok' | 'non2xx' | 'errors' | 'timeouts') => sum(samples.map((x) => x[field]));
  return {
    rps: round1(total('rps')),
    p50: Math.max(...samples.map((x) => x.p50)),
    p99: Math.max(...samples.map((x) => x.p99)),
    ok: total('ok'),
    non2xx: total('non2xx'),
    errors: total('errors'),
    timeouts: total('timeouts'),
    seconds: Math.max(...samples.map((x) => x.seconds)),
  };
}
