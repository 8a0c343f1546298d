// The state of the load section: its server, agents, tasks, subscribers, latencies and figures.
import { Agent } from 'node:http';
import type { Invariants } from '../harness/invariants.js';
import type { Rng } from '../harness/random.js';
import type { RpcAnswer, RpcResult } from '../harness/rpc.js';
import type { Scope } from '../harness/scope.js';
import type { ServeProcess } from '../harness/serve.js';
import type { Subscription } from '../harness/subscribe.js';
import type { Spread } from '../stats.js';
import type { LoadParams, SectionStats } from '../types.js';

export const LOAD_INVARIANTS: Readonly<Record<string, string>> = {
  'all-complete': 'every task created during the storm completes, with the answer it was given',
  'push-delivered': 'every subscriber is acknowledged and receives the completion of each task it watches',
  responsive:
    'tools/list and /healthz answer throughout the storm: p99 of tools/list within 1 s or 50 × its idle p99 measured in the same run, whichever is larger, every probe within 5 s (the load generator shares the machine)',
  'no-errors': 'no request fails (no 5xx, no refused or reset connection, no timeout)',
  'bounded-memory': 'the server resident set stays under the limit',
  'no-crash': 'the server process stays up',
};

export interface LoadTask {
  n: number;
  id: string;
  pollMs: number;
  status: string | undefined;
  final: RpcAnswer | undefined;
  answerAt?: number;
  ackedAt?: number;
}

export interface Subscriber {
  watched: LoadTask[];
  completed: Set<string>;
  acked: boolean;
  handle: Subscription | undefined;
}

export type LatencyKind = 'create' | 'get' | 'update' | 'list' | 'health' | 'push';

export interface LoadStats extends SectionStats {
  tasks: number;
  subscribers: number;
  polls: number;
  updates: number;
  notifications: number;
  errors: Record<string, number>;
  rss?: number[];
  createMs?: number;
  pollIntervalMs?: number | undefined;
  inFlightAtEnd?: number;
  drainMs?: number;
  latency?: Record<LatencyKind, Spread>;
  rssStartBytes?: number | undefined;
  rssMaxBytes?: number;
  rssEndBytes?: number | undefined;
  pollsPerSecond?: number;
}

export class LoadRun {
  readonly pollAgent = new Agent({ keepAlive: true, maxSockets: 128 });
  readonly subAgent = new Agent({ keepAlive: false, maxSockets: Infinity });
  readonly probeAgent = new Agent({ keepAlive: true, maxSockets: 2 });
  readonly lat: Record<LatencyKind, number[]> = {
    create: [],
    get: [],
    update: [],
    list: [],
    health: [],
    push: [],
  };
  readonly stats: LoadStats = {
    tasks: 0,
    subscribers: 0,
    polls: 0,
    updates: 0,
    notifications: 0,
    errors: {},
    rss: [],
  };
  readonly tasks: LoadTask[] = [];
  readonly subs: Subscriber[] = [];
  /** The pollers stop. */
  stopping = false;

  constructor(
    readonly server: ServeProcess,
    readonly scope: Scope,
    readonly params: LoadParams,
    readonly rng: Rng,
    readonly inv: Invariants,
  ) {}

  get url(): string {
    return this.server.url;
  }

  /** A failed request: counted by kind, and a violation. */
  error(what: string, r: Pick<RpcResult, 'netError' | 'status' | 'error' | 'badBody'>): void {
    const key = `${what}: ${r.netError ?? `${r.status} ${r.error?.code ?? ''} ${String(r.error?.message ?? r.badBody ?? '').slice(0, 60)}`}`;
    this.stats.errors[key] = (this.stats.errors[key] ?? 0) + 1;
    this.inv.fail('no-errors', key);
  }
}
