// The clients of a crash or clock section: they keep tasks in flight through whichever processes are up — create
// (with or without an idempotency key), poll, answer input requests, cancel some — and adopt tasks whose creation
// answer was lost. What they did and saw is kept for the checks.
import { rpc, type Json, type RpcAnswer, type RpcOptions, type RpcResult } from '../harness/rpc.js';
import { now, sleep } from '../harness/time.js';
import { TERMINAL } from './analyse-task.js';
import type { Cluster, Slot } from './cluster.js';
import { tally, type CrashRun } from './context.js';
import { noteStatus, planDurable } from './durable.js';
import type { HookKind, Hooks } from './hooks.js';
import { createKeyed } from './keyed.js';
import { show, strip, transient, transientKey } from './replies.js';
import { currentTasks } from './store.js';
import type { ClientRec, JobArgs } from './types.js';

export class Clients {
  readonly recs: ClientRec[] = [];
  readonly byTask = new Map<string, ClientRec>();
  readonly sentCids = new Set<string>();
  /** Client ids whose tools/call got no answer: their task may exist all the same. */
  readonly unknownCids = new Set<string>();
  readonly drivers = new Set<Promise<void>>();
  stopCreating = false;
  private serial = 0;

  constructor(
    readonly run: CrashRun,
    readonly cluster: Cluster,
    readonly hooks: Hooks,
  ) {}

  get stopped(): boolean {
    return this.cluster.stopped;
  }

  countTransient(r: RpcResult): void {
    tally(this.run.stats.transient, transientKey(r));
  }

  newRec(tool = 'chaos_job'): ClientRec {
    const { rng, params, backend } = this.run;
    const steps = rng.int(params.stepsMin, params.stepsMax);
    const job = tool === 'chaos_job';
    const args: JobArgs = job
      ? {
          steps,
          inputs: Math.min(steps, rng.int(0, params.inputsMax)),
          ms: rng.int(params.stepMsMin, params.stepMsMax),
          spinMs: 6,
          ...planDurable(rng, params, steps),
        }
      : ({} as JobArgs);
    const rec: ClientRec = {
      cid: `${backend[0]}${this.serial++}`,
      tool,
      args,
      cancelAfterMs: job && rng.chance(params.cancelRate) ? rng.int(30, params.stepMsMax * 6) : undefined,
      history: [],
      answers: {},
      acked: new Set(),
    };
    if (job && rng.chance(params.keyRate ?? 0)) this.planKeyed(rec);
    this.recs.push(rec);
    return rec;
  }

  // A keyed client: the same arguments and key on every try; some answers dropped on purpose (the request torn
  // down right after its body was sent, a little later, or when the answer begins), some first tries sent to two
  // processes at once.
  private planKeyed(rec: ClientRec): void {
    const { rng, params } = this.run;
    rec.key = `${rec.cid}-${rng.hex(12)}`;
    rec.seenIds = new Set();
    const drops = rng.chance(params.dropRate ?? 0) ? rng.int(1, 2) : 0;
    rec.drops = Array.from({ length: drops }, () =>
      rng.pick([{ afterMs: 0 }, { afterMs: rng.int(1, 40) }, { afterMs: 60_000 }]),
    );
    rec.hedge = rng.chance(params.hedgeRate ?? 0);
  }

  /** A request to a live process (that `accept`s); `hook` tells an armed kill hook where it went. */
  async call(
    method: string,
    args: Json,
    hook?: HookKind,
    accept?: (slot: Slot) => boolean,
    options: RpcOptions = {},
  ): Promise<RpcResult> {
    const slot = await this.cluster.pickLive(accept);
    if (slot === undefined || slot.proc === undefined) return { netError: 'stopped', ms: 0 };
    const pending = rpc(slot.proc.url, method, args, { timeoutMs: 20_000, ...options });
    if (hook !== undefined) this.hooks.fire(hook, slot);
    return pending;
  }

  /** Creates a task for the record (plain or keyed) and follows it to its end. */
  async driveTask(rec: ClientRec): Promise<void> {
    if (rec.key === undefined) await this.createPlain(rec);
    else await createKeyed(this, rec);
    if (rec.taskId !== undefined) await this.followTask(rec);
  }

  track(p: Promise<void>): void {
    this.drivers.add(p);
    void p.finally(() => this.drivers.delete(p));
  }

  /** Starts TTL probes (tasks that must expire), alternating the two probe tools. */
  startTtlProbes(): void {
    const n = this.run.params.ttlProbes;
    for (let i = 0; i < n; i++)
      this.track(this.driveTask(this.newRec(i % 2 === 0 ? 'chaos_ttl_input' : 'chaos_ttl_sleep')));
    this.run.stats.ttlProbes += n;
  }

  // Without a key, a lost answer means: the task may or may not exist; try again under a new client id.
  private async createPlain(rec: ClientRec): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (this.stopped) return;
      const cid = attempt === 0 ? rec.cid : `${rec.cid}.${attempt}`;
      this.sentCids.add(cid);
      // A process whose clock runs ahead stamps a later expiry: TTL probes are created where the clock is not ahead,
      // so that they are due within the run (a clock behind makes them due sooner, which the check allows for).
      const accept = this.run.jumping && rec.tool !== 'chaos_job' ? (s: Slot) => s.offset <= 0 : undefined;
      const r = await this.call(
        'tools/call',
        { name: rec.tool, arguments: { ...rec.args, cid } },
        'create',
        accept,
      );
      if (r.result?.resultType === 'task' && typeof r.result.taskId === 'string') {
        rec.taskId = r.result.taskId;
        rec.cidUsed = cid;
        rec.pollMs = r.result.pollIntervalMs ?? 100;
        break;
      }
      if (!transient(r)) {
        this.run.inv.fail('handles', `tools/call ${rec.tool} (${cid}): ${show(r)}`);
        return;
      }
      this.countTransient(r);
      this.unknownCids.add(cid);
      this.run.stats.createRetries += 1;
      await sleep(30);
    }
  }

  /** Answers the outstanding input requests of a task until tasks/update acknowledges them. */
  private async answer(rec: ClientRec, requests: Record<string, unknown> | undefined): Promise<void> {
    const { inv, rng, stats } = this.run;
    const responses: Record<string, unknown> = {};
    for (const key of Object.keys(requests ?? {})) {
      if (rec.acked.has(key)) {
        inv.fail(
          'answers',
          `task ${rec.taskId}: key ${key} is outstanding again after tasks/update acknowledged it (answer lost)`,
        );
      }
      rec.answers[key] ??= `${rec.cid}:${key}:${rng.hex(6)}`;
      responses[key] = { action: 'accept', content: { v: rec.answers[key] } };
    }
    if (Object.keys(responses).length === 0) return;
    for (let attempt = 0; attempt < 50 && !this.cluster.hardStop; attempt++) {
      stats.answersSent += 1;
      const r = await this.call('tasks/update', { taskId: rec.taskId, inputResponses: responses }, 'update');
      if (r.result !== undefined) {
        for (const key of Object.keys(responses)) rec.acked.add(key);
        stats.answersAcked += 1;
        return;
      }
      if (!transient(r)) {
        inv.fail('answers', `tasks/update ${rec.taskId}: ${show(r)}`);
        return;
      }
      this.countTransient(r);
      await sleep(30);
    }
  }

  /** Polls a task to its end (cancelling it when planned, answering its input requests), then reads it again. */
  async followTask(rec: ClientRec): Promise<void> {
    this.byTask.set(rec.taskId as string, rec);
    this.run.stats.tasks += 1;
    rec.createdAt ??= now();
    const cancelAt = rec.cancelAfterMs === undefined ? undefined : rec.createdAt + rec.cancelAfterMs;
    for (;;) {
      await sleep(rec.pollMs as number);
      if (this.stopped) return;
      if (cancelAt !== undefined && !rec.cancelAcked && now() >= cancelAt) await this.cancel(rec);
      const r = await this.call('tasks/get', { taskId: rec.taskId });
      if (transient(r)) {
        this.countTransient(r);
        continue;
      }
      if (r.error !== undefined) {
        if (rec.tool !== 'chaos_job' && /expired/i.test(r.error.message)) {
          rec.expiredSeenAt = now();
          return;
        }
        this.run.inv.fail('handles', `tasks/get ${rec.taskId} (a handle tools/call returned): ${show(r)}`);
        return;
      }
      // A reply with neither result nor error is not transient: it fails this client, as a finding.
      const t = r.result as RpcAnswer;
      if (rec.history[rec.history.length - 1] !== t.status) rec.history.push(t.status as string);
      noteStatus(rec, t.statusMessage);
      if (TERMINAL.has(t.status as string)) {
        rec.final = t;
        rec.finalAt = now();
        break;
      }
      if (t.status === 'input_required' && rec.tool === 'chaos_job') await this.answer(rec, t.inputRequests);
    }
    await this.rereadFinal(rec);
  }

  private async cancel(rec: ClientRec): Promise<void> {
    const c = await this.call('tasks/cancel', { taskId: rec.taskId });
    rec.cancelSent = true;
    if (c.result !== undefined) {
      rec.cancelAcked = true;
      this.run.stats.cancelsAcked += 1;
    } else if (!transient(c)) this.run.inv.fail('terminal', `tasks/cancel ${rec.taskId}: ${show(c)}`);
  }

  /** A terminal snapshot never changes, whichever process serves it. */
  private async rereadFinal(rec: ClientRec): Promise<void> {
    for (let i = 0; i < 2 && !this.cluster.hardStop; i++) {
      const r = await this.call('tasks/get', { taskId: rec.taskId });
      if (transient(r)) {
        this.countTransient(r);
        continue;
      }
      this.run.inv.expect(
        'terminal',
        r.result !== undefined && strip(r.result) === strip(rec.final),
        () =>
          `task ${rec.taskId}: a later read differs from the terminal snapshot: ${show(r)} vs ${strip(rec.final)}`,
      );
    }
  }

  /** Tasks whose tools/call answer was lost exist all the same: adopt them (poll and answer like the others). */
  async adoptOrphans(): Promise<void> {
    let rows;
    try {
      rows = await currentTasks(this.run.store);
    } catch {
      return;
    }
    for (const row of rows) {
      if (this.byTask.has(row.id)) continue;
      const args = JSON.parse(row.args) as JobArgs & { cid: string };
      if (!this.unknownCids.has(args.cid)) continue; // its creator may still be waiting for the answer
      const rec: ClientRec = {
        cid: args.cid,
        cidUsed: args.cid,
        tool: row.tool,
        args,
        orphan: true,
        taskId: row.id,
        pollMs: 100,
        history: [],
        answers: {},
        acked: new Set(),
      };
      this.recs.push(rec);
      this.run.stats.orphansAdopted += 1;
      this.track(this.followTask(rec));
    }
  }

  /** Keeps `inflight` tasks (plus the TTL probes) going until told to stop creating; adopts orphans meanwhile. */
  async manage(): Promise<void> {
    const { params, scope } = this.run;
    this.startTtlProbes();
    let lastAdopt = now();
    while (!this.stopCreating && !scope.closed) {
      const jobs = [...this.drivers].length;
      for (let n = jobs; n < params.inflight + params.ttlProbes && !this.stopCreating; n++)
        this.track(this.driveTask(this.newRec()));
      if (now() - lastAdopt > 2_000) {
        lastAdopt = now();
        await this.adoptOrphans();
      }
      await sleep(25);
    }
  }
}
