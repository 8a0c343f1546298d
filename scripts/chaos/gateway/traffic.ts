// The clients of a gateway section: they keep tasks of both upstream tools in flight through whichever replicas are
// up, each created under an idempotency key of its own (asked again, under the same key, after every lost answer)
// and followed with tasks/get to its end. What they were handed and read last is kept for the checks.
import { rpc, type Json, type RpcOptions, type RpcResult } from '../harness/rpc.js';
import { now, sleep } from '../harness/time.js';
import { show, transient as storeTransient, transientKey } from '../crash/replies.js';
import { IDEMPOTENCY_KEY, type GatewayRec } from './check.js';
import type { Fleet, GatewayRun } from './fleet.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** How often a client asks again; bounded, and far beyond what a section's kills can cost. */
const MAX_TRIES = 5_000;

/**
 * Answers a client may simply retry: those of crash/replies.ts, and a replica started while the upstream was down
 * that has not read its tools yet (-32603 "Upstream unavailable", HTTP 500).
 */
const transient = (r: RpcResult): boolean =>
  storeTransient(r) ||
  (r.status === 500 && r.error?.code === -32603 && /^Upstream unavailable: /.test(String(r.error.message)));

export class Traffic {
  readonly recs: GatewayRec[] = [];
  readonly drivers = new Set<Promise<void>>();
  stopCreating = false;

  constructor(
    private readonly run: GatewayRun,
    private readonly fleet: Fleet,
  ) {}

  /** A new call: a slow_sum or a send_payment with arguments of its own and a random duration. */
  private newRec(): GatewayRec {
    const { rng, params } = this.run;
    const n = this.recs.length;
    const ms = rng.int(params.msMin, params.msMax);
    const payment = rng.chance(params.paymentRate);
    const rec: GatewayRec = {
      key: `gw-${n}-${rng.hex(12)}`,
      tool: payment ? 'send_payment' : 'slow_sum',
      args: payment ? { to: `payee-${n}`, cents: rng.int(1, 99_999), ms } : { a: n, b: rng.int(0, 999), ms },
      seenIds: new Set(),
    };
    this.recs.push(rec);
    this.run.stats.created += 1;
    return rec;
  }

  /** A request to a live replica. */
  private async call(method: string, params: Json, options: RpcOptions = {}): Promise<RpcResult> {
    const replica = await this.fleet.pickLive();
    if (replica?.proc === undefined) return { netError: 'stopped', ms: 0 };
    return rpc(replica.proc.url, method, params, { timeoutMs: 20_000, ...options });
  }

  private countTransient(r: RpcResult): void {
    const key = transientKey(r);
    this.run.stats.transient[key] = (this.run.stats.transient[key] ?? 0) + 1;
  }

  /** tools/call under the record's key until a reply names the task. */
  private async create(rec: GatewayRec): Promise<void> {
    const request = { name: rec.tool, arguments: rec.args };
    const meta = { [IDEMPOTENCY_KEY]: rec.key };
    for (let attempt = 0; attempt < MAX_TRIES && !this.fleet.stopped; attempt++) {
      const r = await this.call('tools/call', request, { meta });
      if (r.result?.resultType === 'task' && typeof r.result.taskId === 'string') {
        rec.seenIds.add(r.result.taskId);
        rec.taskId ??= r.result.taskId;
        return;
      }
      if (!transient(r)) {
        this.run.inv.fail('handles', `tools/call ${rec.tool} (key ${rec.key}): ${show(r)}`);
        return;
      }
      this.countTransient(r);
      await sleep(30);
    }
  }

  /** tasks/get until the task is terminal. */
  private async follow(rec: GatewayRec): Promise<void> {
    for (let attempt = 0; attempt < MAX_TRIES && !this.fleet.stopped; attempt++) {
      await sleep(this.run.rng.int(80, 160));
      const r = await this.call('tasks/get', { taskId: rec.taskId });
      if (transient(r)) {
        this.countTransient(r);
        continue;
      }
      if (r.result === undefined) {
        this.run.inv.fail('handles', `tasks/get ${rec.taskId} (a handle tools/call returned): ${show(r)}`);
        return;
      }
      if (TERMINAL.has(String(r.result.status))) {
        rec.final = r.result;
        return;
      }
    }
  }

  private track(p: Promise<void>): void {
    this.drivers.add(p);
    void p.finally(() => this.drivers.delete(p));
  }

  /**
   * Keeps up to `inflight` calls going until told to stop or `tasks` were created, spread over the chaos time (no
   * more created by a moment than its share of `tasks`, plus `inflight`).
   */
  async manage(): Promise<void> {
    const { params } = this.run;
    const started = now();
    while (!this.stopCreating && !this.fleet.stopped && this.recs.length < params.tasks) {
      const share = Math.ceil(
        params.tasks * Math.min(1, (now() - started) / params.chaosMs) + params.inflight,
      );
      const limit = Math.min(params.tasks, share);
      while (this.drivers.size < params.inflight && this.recs.length < limit) {
        const rec = this.newRec();
        this.track(this.create(rec).then(() => (rec.taskId === undefined ? undefined : this.follow(rec))));
      }
      this.run.progress?.(`${this.recs.length} tasks, ${JSON.stringify(this.run.stats.kills)}`);
      await sleep(this.run.rng.int(10, 60));
    }
  }
}
