// Keyed creation: a tools/call under an idempotency key, asked again after every lost or dropped answer (the same
// arguments and key must give the same task); some first tries go to two processes at once.
import type { Json, RpcAnswer, RpcOptions, RpcResult } from '../harness/rpc.js';
import { now, sleep } from '../harness/time.js';
import type { Cluster, Slot } from './cluster.js';
import { tally, type CrashRun } from './context.js';
import type { HookKind } from './hooks.js';
import { show, transient } from './replies.js';
import type { ClientRec } from './types.js';

const IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';

/** What keyed creation uses of the section's clients (the Clients of clients.ts, which calls it). */
export interface KeyedClients {
  readonly run: CrashRun;
  readonly cluster: Cluster;
  readonly sentCids: Set<string>;
  readonly stopped: boolean;
  call(
    method: string,
    args: Json,
    hook?: HookKind,
    accept?: (slot: Slot) => boolean,
    options?: RpcOptions,
  ): Promise<RpcResult>;
  countTransient(r: RpcResult): void;
}

export async function createKeyed(clients: KeyedClients, rec: ClientRec): Promise<void> {
  const { stats, inv } = clients.run;
  clients.sentCids.add(rec.cid);
  stats.keys.keyed += 1;
  for (let attempt = 0; attempt < 500; attempt++) {
    if (clients.stopped) return;
    const sentAt = now();
    const replies = await tries(clients, rec, attempt);
    let answer: RpcAnswer | undefined;
    for (const r of replies) {
      const verdict = classify(clients, rec, r);
      if (verdict === 'fatal') {
        inv.fail('idempotent', `tools/call ${rec.tool} (${rec.cid}, key ${rec.key}): ${show(r)}`);
        return;
      }
      if (verdict === 'task') answer ??= r.result;
    }
    if (answer !== undefined) {
      rec.taskId = answer.taskId;
      rec.cidUsed = rec.cid;
      rec.pollMs = answer.pollIntervalMs ?? 100;
      // Created by an earlier try whose answer was lost: this answer joined it.
      if (attempt > 0 && Date.parse(answer.createdAt as string) < sentAt) stats.keys.joined += 1;
      return;
    }
    stats.keys.retried += 1;
    await sleep(30);
  }
  inv.fail('idempotent', `tools/call ${rec.tool} (${rec.cid}, key ${rec.key}): no answer after 500 tries`);
}

/** The replies of one try: one request, or (hedged first try) two processes at once (one, if only one is up). */
async function tries(clients: KeyedClients, rec: ClientRec, attempt: number): Promise<RpcResult[]> {
  const request = { name: rec.tool, arguments: { ...rec.args, cid: rec.cid } };
  const meta = { [IDEMPOTENCY_KEY]: rec.key };
  const options = { meta, drop: rec.drops?.[attempt] };
  if (attempt !== 0 || !rec.hedge)
    return [await clients.call('tools/call', request, 'create', undefined, options)];
  // Concurrent creations under one key.
  clients.run.stats.keys.hedged += 1;
  const first = await clients.cluster.pickLive();
  const others = clients.cluster.live().filter((s) => s !== first);
  const second = others.length > 0 ? clients.run.rng.pick(others) : first;
  return Promise.all(
    [first, second].map((slot, i) =>
      clients.call(
        'tools/call',
        request,
        i === 0 ? 'create' : undefined,
        (s) => s === slot,
        i === 0 ? options : { meta },
      ),
    ),
  );
}

/** What a reply of a keyed try tells: a task, a dropped or lost answer (retry), or a finding. */
function classify(clients: KeyedClients, rec: ClientRec, r: RpcResult): 'task' | 'retry' | 'fatal' {
  const { stats } = clients.run;
  if (r.result?.resultType === 'task' && typeof r.result.taskId === 'string') {
    rec.seenIds?.add(r.result.taskId);
    return 'task';
  }
  if (r.netError === 'dropped') {
    tally(stats.keys.dropped, r.droppedAt as string);
    return 'retry';
  }
  if (transient(r)) {
    clients.countTransient(r);
    if (r.netError !== 'ECONNREFUSED' && r.netError !== 'stopped') stats.keys.lostToKills += 1;
    return 'retry';
  }
  return 'fatal';
}
