// The state of a fault-injection section: its one `serve` process (started again after a crash, which counts as a
// violation), the phase every request is sent in, and how each answer is classified.
import { Agent } from 'node:http';
import type { Invariants } from '../harness/invariants.js';
import type { Rng } from '../harness/random.js';
import { rpc, type Json, type RpcAnswer, type RpcOptions, type RpcResult } from '../harness/rpc.js';
import type { Scope } from '../harness/scope.js';
import { crashExcerpt, startServe, type ServeProcess } from '../harness/serve.js';
import { sleep } from '../harness/time.js';
import type { FaultParams, SectionStats } from '../types.js';

const STORE_ERROR = /^Task store unavailable: \S/;

export interface FaultStats extends SectionStats {
  faults: Record<string, number>;
  requests: number;
  /** -32603 answers by reason. */
  storeErrors: Record<string, number>;
  otherErrors: number;
  handles: number;
  tasksCompleted: number;
  tasksFailed: number;
  recoveryMs: number[];
  listMsDuringFault?: number[];
  busyErrors: number;
  fullErrors?: number;
  waitMs?: number[];
  crashes: number;
  terminated?: number;
  ballastBytes?: number;
  cutByCrash?: number;
  recoveryP100?: number;
  waitP99?: number | undefined;
  waitMax?: number | undefined;
  listP99DuringFault?: number | undefined;
  listMaxDuringFault?: number | undefined;
}

/** A task whose handle tools/call returned: when and in which phase, and its last snapshot once it ended. */
export interface HandleRec {
  taskId: string;
  sentIn: string;
  answeredAt: string;
  final?: RpcAnswer;
}

/** A reply with the server generation it was sent to (a restart after a crash starts a new one). */
export type FaultReply = RpcResult & { gen: number };

export class FaultRun {
  server: ServeProcess;
  url: string;
  /** Bumped by each restart after a crash. */
  generation = 0;
  /** What the store is going through: baseline, recovery, or the fault (terminate, busy, full, …). */
  phase = 'baseline';
  readonly tasks: HandleRec[] = [];
  readonly handles: HandleRec[] = [];
  /** Requests that got no answer, judged at the end (a crash of their server explains them). */
  readonly netFailures: { r: { gen: number }; why: string }[] = [];
  creating = true;
  running = true;
  /** Numbers the client ids of the traffic's tasks. */
  serial = 0;
  private restarting: Promise<void> | undefined;
  // A fresh connection per request: a keep-alive socket the server closes as it wakes from a blocked event loop
  // would otherwise show up as a reset.
  readonly agent = new Agent({ keepAlive: false });

  constructor(
    readonly scope: Scope,
    readonly params: FaultParams,
    readonly rng: Rng,
    readonly inv: Invariants,
    readonly stats: FaultStats,
    private readonly serveArgs: readonly string[],
    private readonly env: Record<string, string>,
  ) {
    this.server = startServe(scope, serveArgs, { env });
    this.url = '';
  }

  async start(): Promise<void> {
    await this.server.started;
    this.url = this.server.url;
  }

  /** After a crash: the server started again (and the crash recorded), before the next request. */
  ensureServer(): Promise<void> {
    if (!this.server.dead || this.scope.closed) return Promise.resolve();
    this.restarting ??= this.restart();
    return this.restarting;
  }

  private async restart(): Promise<void> {
    this.stats.crashes += 1;
    this.inv.fail(
      'no-crash',
      `the server exited during ${this.phase}: ${crashExcerpt(this.server.stderr())}`,
    );
    // The store may still be away (a start-up needs it): try again until it is back.
    for (let attempt = 0; ; attempt++) {
      this.server = startServe(this.scope, this.serveArgs, { env: this.env });
      try {
        await this.server.started;
        break;
      } catch (err) {
        if (attempt >= 60) throw err;
        await sleep(500);
      }
    }
    this.url = this.server.url;
    this.generation += 1;
    this.restarting = undefined;
  }

  async call(method: string, args: Json, options: RpcOptions = {}): Promise<FaultReply> {
    const gen = this.generation;
    const r = await rpc(this.url, method, args, { agent: this.agent, timeoutMs: 60_000, ...options });
    return { ...r, gen };
  }

  /** Classifies an answer by the phase it was sent in: ok, a clean store error, a network failure, or other. */
  record(method: string, r: FaultReply, sentIn: string): 'ok' | 'store' | 'net' | 'other' {
    const { stats, inv, params } = this;
    stats.requests += 1;
    if (sentIn !== 'baseline' && sentIn !== 'recovery' && r.netError === undefined) {
      stats.waitMs?.push(r.ms);
      inv.expect(
        'bounded-wait',
        r.ms <= params.waitBoundMs,
        () =>
          `${method} sent during ${sentIn} was answered after ${Math.round(r.ms)} ms (${r.error === undefined ? 'success' : r.error.message})`,
      );
    }
    if (r.netError !== undefined) {
      // Judged at the end: requests cut by a crash of the server they were sent to count as that crash.
      this.netFailures.push({
        r,
        why: `${method} sent during ${sentIn}: no answer (${r.netError}) after ${Math.round(r.ms)} ms`,
      });
      return 'net';
    }
    if (r.error === undefined && r.badBody === undefined) return 'ok';
    const message = String(r.error?.message ?? r.badBody);
    if (r.error?.code === -32603 && STORE_ERROR.test(message) && r.status === 500) {
      const reason = message.replace('Task store unavailable: ', '').replace(/\(.*$/, '').trim();
      stats.storeErrors[reason] = (stats.storeErrors[reason] ?? 0) + 1;
      if (/SQLITE_BUSY/.test(message)) stats.busyErrors += 1;
      if (/SQLITE_FULL/.test(message)) stats.fullErrors = (stats.fullErrors ?? 0) + 1;
      inv.ok('clear-errors');
      return 'store';
    }
    stats.otherErrors += 1;
    inv.fail(
      'clear-errors',
      `${method} during ${sentIn}: HTTP ${r.status} ${r.error?.code} ${message.slice(0, 200)}`,
    );
    return 'other';
  }

  /** A task handle returned by a creation sent during `sentIn`: kept, and followed to its end. */
  adopt(taskId: string, sentIn: string): HandleRec {
    this.stats.handles += 1;
    const rec: HandleRec = { taskId, sentIn, answeredAt: this.phase };
    this.handles.push(rec);
    return rec;
  }
}
