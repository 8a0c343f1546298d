// The state of the fuzz section: its server, figures and failures, and how one generated case is sent and judged.
import fc from 'fast-check';
import { check, sentOf, sseTimeoutFor, type Verdict } from '../../../test/support/fuzz-model.js';
import { post, type HeaderInit, type PostResult } from '../../../test/support/http.js';
import {
  META_CLIENT_CAPABILITIES,
  META_PROTOCOL_VERSION,
  PROTOCOL_VERSION,
} from '../../../test/support/protocol.js';
import type { Invariants } from '../harness/invariants.js';
import { TASK_CAPS } from '../harness/paths.js';
import type { Rng } from '../harness/random.js';
import { httpGet, type Json } from '../harness/rpc.js';
import { crashExcerpt, rssOf, type ServeProcess } from '../harness/serve.js';
import type { SectionStats } from '../types.js';
import { postFresh } from './http.js';
import type { ChaosArbitraries } from './surface.js';

export interface FuzzStats extends SectionStats {
  requests: number;
  byKind: Record<string, number>;
  statuses: Record<string, number>;
  failures: number;
  rssMaxBytes: number;
  rssStartBytes: number | undefined;
  rssEndBytes?: number | undefined;
  rssSamples?: number[];
  healthChecks: number;
  slowSockets: number;
  slowHealthMs?: number[];
  slowHealthP99?: number | undefined;
  slowClosedByServer?: number;
  freshRetries?: number;
  examples?: string[];
}

/** The `_meta` of a request with the given capabilities. */
export const envelopeMeta = (caps: unknown = TASK_CAPS): Json => ({
  [META_PROTOCOL_VERSION]: PROTOCOL_VERSION,
  [META_CLIENT_CAPABILITIES]: caps,
});

export class FuzzRun {
  readonly failures: ({ kind: string } & Verdict)[] = [];
  readonly rssTrail: number[] = [];
  private readonly batches = new Map<string, unknown[]>();
  private batchSeed: number;

  constructor(
    readonly server: ServeProcess,
    readonly inv: Invariants,
    readonly rng: Rng,
    readonly stats: FuzzStats,
    seed: number,
    /** Real task ids (some waiting for input, some finished) and the generators that use them. */
    readonly taskIds: readonly string[],
    readonly arbs: ChaosArbitraries,
  ) {
    this.batchSeed = seed;
  }

  get url(): string {
    return this.server.url;
  }

  count(kind: string): void {
    this.stats.byKind[kind] = (this.stats.byKind[kind] ?? 0) + 1;
  }

  noteFailure(kind: string, outcome: Verdict): void {
    this.stats.failures += 1;
    if (outcome.fiveXX) this.inv.fail('no-5xx', `${kind}: ${outcome.why}\n${outcome.detail}`);
    else this.inv.fail('schema-valid', `${kind}: ${outcome.why}\n${outcome.detail}`);
    if (this.failures.length < 20) this.failures.push({ kind, ...outcome });
  }

  noteStatus(status: number): void {
    this.stats.requests += 1;
    this.stats.statuses[status] = (this.stats.statuses[status] ?? 0) + 1;
  }

  /** One generated case per call; batches are sampled lazily per kind with a seed derived from the section's. */
  sample<T>(name: string, arb: fc.Arbitrary<T>): T {
    let b = this.batches.get(name) as T[] | undefined;
    if (b === undefined || b.length === 0) {
      b = fc.sample(arb, { numRuns: 200, seed: this.batchSeed++ });
      this.batches.set(name, b);
    }
    return b.pop() as T;
  }

  /** Sends one body and judges the reply with the oracle of test/support/fuzz-model.ts. */
  async exchange(kind: string, body: string | Uint8Array, headers: HeaderInit): Promise<void> {
    const sent = sentOf(body, undefined, headers);
    const res = await this.send(kind, body, headers, sent.label);
    if (res === undefined) return;
    this.noteStatus(res.status);
    const outcome = check(sent, res);
    if (outcome !== undefined) this.noteFailure(kind, outcome);
    else {
      this.inv.ok('schema-valid');
      if (res.status < 500) this.inv.ok('no-5xx');
    }
  }

  private async send(
    kind: string,
    body: string | Uint8Array,
    headers: HeaderInit,
    label: string,
  ): Promise<PostResult | undefined> {
    const options = { timeoutMs: 20_000, sseTimeoutMs: sseTimeoutFor(body) };
    try {
      return await post(this.url, body, headers, options);
    } catch (err) {
      // A reset while uploading an oversized body is an acceptable refusal; anything else means trouble.
      const e = err as { cause?: { code?: unknown } };
      const why = String(e?.cause?.code ?? e?.cause ?? err);
      if (kind === 'oversize' && /ECONNRESET|EPIPE|other side closed|socket/i.test(why)) return undefined;
      // fetch may have sent the request on a pooled connection the server was closing (after a refused
      // body, say): the same request again on a fresh connection tells a client race from a server fault.
      try {
        const res = await postFresh(this.url, body, headers, options);
        this.stats.freshRetries = (this.stats.freshRetries ?? 0) + 1;
        return res;
      } catch (again) {
        const a = again as { code?: unknown; message?: unknown };
        this.noteFailure(kind, {
          why: `no answer: ${why}, then ${a?.code ?? a?.message ?? again} on a fresh connection`,
          fiveXX: false,
          detail: `request ${label}\nheaders ${JSON.stringify(headers).slice(0, 600)}`,
        });
        return undefined;
      }
    }
  }

  /** /healthz answers and the server is up; samples its resident set. */
  async health(): Promise<void> {
    const h = await httpGet(this.url, '/healthz', { timeoutMs: 5_000 });
    this.stats.healthChecks += 1;
    this.inv.expect(
      'no-crash',
      h.status === 200 && !this.server.dead,
      () =>
        `/healthz after ${this.stats.requests} requests: ${h.netError ?? h.status}${this.server.dead ? `; the server exited: ${crashExcerpt(this.server.stderr())}` : ''}`,
    );
    const rss = rssOf(this.server.pid);
    if (rss !== undefined) {
      this.stats.rssMaxBytes = Math.max(this.stats.rssMaxBytes, rss);
      this.rssTrail.push(rss);
    }
  }
}
