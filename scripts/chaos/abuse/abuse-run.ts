// The state of the abuse section: its server, its three principals (two tenants), the canary every stored column is
// given, what the attacks saw, and the figures.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import type { Invariants } from '../harness/invariants.js';
import { rpc, type Json, type RpcOptions, type RpcResult } from '../harness/rpc.js';
import type { Scope } from '../harness/scope.js';
import type { ServeProcess } from '../harness/serve.js';
import { TASK_CAPS } from '../harness/paths.js';
import type { AbuseParams, SectionStats } from '../types.js';

export const ABUSE_INVARIANTS: Readonly<Record<string, string>> = {
  alive: 'the server stays up through every attack and answers /healthz at the end',
  'refused-cleanly':
    'each attack gets its documented refusal: 401 before an unauthenticated body is buffered, 429 past the listen cap and the quotas, -32601 for legacy resources/subscribe on a server without resources, -32603 or a failed task for an unserializable result',
  'others-responsive':
    "another tenant's tools/list p99 during the attacks stays within 1 s or 50 × its idle p99 measured in the same run, whichever is larger",
  'fair-share':
    "another tenant's task, created behind the attacker's backlog of tasks, completes within 3 s or 5 × its time on the idle server, whichever is larger (first in, first out would make it wait for the whole backlog)",
  'bounded-storage': "the attacker's stored tasks stop at the storage quota, cancelled ones included",
  'bounded-memory': 'the server resident set stays under the limit',
  'no-plaintext':
    'with an encryption key, the canary sent in arguments, status texts, errors, client capabilities and legacy session state appears nowhere in the store: not in the SQLite file or its WAL, not in the PostgreSQL relation files',
};

export interface Principal {
  token: string;
  tenant: string;
  principal: string;
}

export interface AbuseStats extends SectionStats {
  idleListP99Ms?: number;
  attackListP99Ms?: number;
  aloneTaskMs?: number;
  behindBacklogMs?: number;
  floodCreated?: number;
  floodRefused?: number;
  listensRefused?: number;
  uploadsRefused?: number;
  sessionsRefused?: number;
  storedAccepted?: number;
  rssMaxBytes?: number;
  storeBytes?: number;
  scannedFiles?: number;
}

/** Bearer tokens of the section: the victim in one tenant, the attacker and a bystander in the other. */
export function principals(): { bob: Principal; mallory: Principal; alice: Principal } {
  const token = (): string => randomBytes(18).toString('base64url');
  return {
    bob: { token: token(), tenant: 'tenant-b', principal: 'bob' },
    mallory: { token: token(), tenant: 'tenant-a', principal: 'mallory' },
    alice: { token: token(), tenant: 'tenant-a', principal: 'alice' },
  };
}

/** Writes the token file `serve --auth` reads. */
export function writeTokens(dir: string, people: Principal[]): string {
  const path = join(dir, 'tokens.json');
  writeFileSync(path, JSON.stringify({ tokens: people }));
  return path;
}

export class AbuseRun {
  readonly canary = `CANARY${randomBytes(8).toString('hex')}`;
  readonly agent = new Agent({ keepAlive: true, maxSockets: 32 });
  readonly probeAgent = new Agent({ keepAlive: true, maxSockets: 2 });
  readonly listLatency: number[] = [];
  readonly rss: number[] = [];
  readonly stats: AbuseStats = {};
  /** Client capabilities carrying the canary (kept with each task created). */
  readonly caps: Json;

  constructor(
    readonly server: ServeProcess,
    readonly scope: Scope,
    readonly params: AbuseParams,
    readonly inv: Invariants,
    readonly people: ReturnType<typeof principals>,
  ) {
    this.caps = { ...TASK_CAPS, experimental: { canary: { v: this.canary } } };
  }

  get url(): string {
    return this.server.url;
  }

  /** A request as `who`, with the canary in its capabilities. */
  call(who: Principal, method: string, params: Json = {}, options: RpcOptions = {}): Promise<RpcResult> {
    return rpc(this.url, method, params, {
      agent: this.agent,
      timeoutMs: 30_000,
      retryReused: true,
      caps: this.caps,
      token: who.token,
      ...options,
    });
  }

  close(): void {
    this.agent.destroy();
    this.probeAgent.destroy();
  }
}
