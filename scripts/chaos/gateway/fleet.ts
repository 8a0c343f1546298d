// The processes of a gateway section: the HTTP upstream (test/fixtures/gateway/upstream-v1.mjs --http, started again
// on its port after a kill) and the `durable-mcp gateway` replicas on one store, the last ones with a stdio upstream
// child each; started, killed at the driver's word and restarted. An exit nobody planned is recorded as a crash.
// Upstream processes (stdio children, and those a killed replica left behind) are found through /proc by the call
// log named in their environment, and killed when the section ends.
import { readdirSync, readFileSync } from 'node:fs';
import type { Invariants } from '../harness/invariants.js';
import { BIN, UPSTREAM_V1 } from '../harness/paths.js';
import type { Rng } from '../harness/random.js';
import type { Scope } from '../harness/scope.js';
import { crashExcerpt, startServe, type ServeProcess } from '../harness/serve.js';
import { sleep } from '../harness/time.js';
import type { GatewayParams, SectionStats } from '../types.js';
import type { GatewayFindings } from './check.js';

export type KillTarget = 'gateway' | 'http-upstream' | 'stdio-upstream';

export interface GatewayStats extends SectionStats, Partial<GatewayFindings> {
  kills: Record<KillTarget, number>;
  restarts: number;
  created: number;
  /** Replies clients retried, by kind. */
  transient: Record<string, number>;
  chaosMs?: number;
  settleMs?: number;
}

/** What the parts of a gateway section share. */
export interface GatewayRun {
  params: GatewayParams;
  scope: Scope;
  rng: Rng;
  inv: Invariants;
  stats: GatewayStats;
  /** The upstream's call log (UPSTREAM_CALLS). */
  callsFile: string;
  /** `--store …` (and the PostgreSQL schema) of every replica. */
  storeArgs: string[];
  serveFlags: readonly string[];
  progress: ((text: string) => void) | undefined;
}

export interface Replica {
  i: number;
  stdio: boolean;
  proc: ServeProcess | undefined;
  restartTimer: NodeJS.Timeout | undefined;
}

/** Upstream processes of this section (their environment names its call log): pid and parent pid. */
export function upstreamProcesses(callsFile: string): { pid: number; ppid: number }[] {
  const found: { pid: number; ppid: number }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(UPSTREAM_V1)) continue;
      if (!readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(`UPSTREAM_CALLS=${callsFile}`))
        continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      found.push({ pid: Number(name), ppid });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
};

/** SIGKILLs a process that is not our child and waits (up to 3 s) until it is gone. */
export async function killPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  for (let i = 0; i < 300 && alive(pid); i++) await sleep(10);
}

export class Fleet {
  readonly replicas: Replica[];
  upstream: ServeProcess | undefined;
  private upstreamPort = 0;
  private upstreamTimer: NodeJS.Timeout | undefined;
  private upstreamFailures = 0;
  /** Exits and start failures nobody planned. */
  readonly unplanned: string[] = [];
  /** While on, killed processes come back after a random delay; afterwards at once. */
  chaosOn = true;
  hardStop = false;

  constructor(private readonly run: GatewayRun) {
    const { gateways, stdioGateways } = run.params;
    this.replicas = Array.from({ length: gateways }, (_, i) => ({
      i,
      stdio: i >= gateways - stdioGateways,
      proc: undefined,
      restartTimer: undefined,
    }));
    run.scope.defer(() => Promise.all(upstreamProcesses(run.callsFile).map((p) => killPid(p.pid))));
  }

  get stopped(): boolean {
    return this.hardStop || this.run.scope.closed;
  }

  get upstreamUrl(): string {
    return `http://127.0.0.1:${this.upstreamPort}/mcp`;
  }

  private restartDelay(): number {
    return this.chaosOn ? this.run.rng.int(0, this.run.params.restartMaxMs) : 0;
  }

  /** Starts the HTTP upstream (on its port once it has one); resolves when it listens. */
  startUpstream(): Promise<void> {
    const { scope, callsFile } = this.run;
    const proc = startServe(scope, ['--http', String(this.upstreamPort)], {
      command: [UPSTREAM_V1],
      env: { UPSTREAM_CALLS: callsFile },
      timeoutMs: 15_000,
    });
    this.upstream = proc;
    let listened = false;
    void proc.exited.then(() => {
      if (listened && !proc.doomed && !this.hardStop) {
        this.unplanned.push(
          `the HTTP upstream (pid ${proc.pid}) exited on its own: ${crashExcerpt(proc.stderr())}`,
        );
        this.scheduleUpstream(100);
      }
    });
    return proc.started.then(
      () => {
        listened = true;
        this.upstreamFailures = 0;
        this.upstreamPort = proc.port as number;
      },
      (err: Error) => {
        // Its port may still be held for a moment: try again, a bounded number of times.
        if (proc.doomed || this.hardStop) return;
        this.upstreamFailures += 1;
        if (this.upstreamFailures < 20) this.scheduleUpstream(100);
        else this.unplanned.push(`the HTTP upstream does not start again: ${err.message.slice(0, 1_500)}`);
      },
    );
  }

  private scheduleUpstream(delay: number): void {
    if (this.hardStop || this.upstreamTimer !== undefined) return;
    this.upstreamTimer = setTimeout(() => {
      this.upstreamTimer = undefined;
      if (this.stopped) return;
      this.run.stats.restarts += 1;
      void this.startUpstream();
    }, delay);
  }

  startReplica(replica: Replica): ServeProcess {
    const { scope, params, callsFile, storeArgs, serveFlags } = this.run;
    const upstream = replica.stdio ? `stdio:"${process.execPath}" "${UPSTREAM_V1}"` : this.upstreamUrl;
    const args = [
      ...serveFlags,
      ...storeArgs,
      ...['--upstream', upstream, '--upstream-env', 'UPSTREAM_CALLS'],
      ...['--upstream-connect-timeout-ms', String(params.connectTimeoutMs)],
      ...['--upstream-retry', String(params.upstreamRetry)],
      ...['--lease-ms', String(params.leaseMs), '--concurrency', String(params.concurrency)],
    ];
    const proc = startServe(scope, args, {
      command: [BIN, 'gateway'],
      env: { UPSTREAM_CALLS: callsFile },
      timeoutMs: 30_000,
    });
    replica.proc = proc;
    void proc.exited.then(() => {
      if (proc.doomed || this.hardStop) return;
      this.unplanned.push(`gateway pid ${proc.pid} exited on its own: ${crashExcerpt(proc.stderr())}`);
      this.scheduleReplica(replica, 100);
    });
    proc.started.catch((err: Error) => {
      if (!proc.doomed && !this.hardStop)
        this.unplanned.push(`a gateway failed to start: ${err.message.slice(0, 1_500)}`);
    });
    return proc;
  }

  private scheduleReplica(replica: Replica, delay: number): void {
    if (this.hardStop || replica.restartTimer !== undefined) return;
    replica.restartTimer = setTimeout(() => {
      replica.restartTimer = undefined;
      if (this.stopped) return;
      this.run.stats.restarts += 1;
      this.startReplica(replica);
    }, delay);
  }

  live(): Replica[] {
    return this.replicas.filter((r) => r.proc?.ready && !r.proc.dead && !r.proc.doomed);
  }

  /** A live replica, waiting for one to come up; undefined once the section stops. */
  async pickLive(): Promise<Replica | undefined> {
    for (;;) {
      if (this.stopped) return undefined;
      const l = this.live();
      if (l.length > 0) return this.run.rng.pick(l);
      await sleep(20);
    }
  }

  /** SIGKILLs a process of the fleet (the HTTP upstream, or a replica) and schedules it to come back. */
  async kill(target: Replica | 'http-upstream'): Promise<boolean> {
    const proc = target === 'http-upstream' ? this.upstream : target.proc;
    if (proc === undefined || !proc.ready || proc.dead || proc.doomed) return false;
    proc.doomed = true;
    proc.child.kill('SIGKILL');
    await proc.exited;
    if (target === 'http-upstream') this.scheduleUpstream(this.restartDelay());
    else this.scheduleReplica(target, this.restartDelay());
    this.run.stats.kills[target === 'http-upstream' ? target : 'gateway'] += 1;
    return true;
  }

  /** SIGKILLs the stdio upstream child of a live replica (which starts another for its next call). */
  async killStdioChild(): Promise<boolean> {
    const parents = new Set(this.live().flatMap((r) => (r.stdio ? [r.proc?.pid] : [])));
    const children = upstreamProcesses(this.run.callsFile).filter((p) => parents.has(p.ppid));
    if (children.length === 0) return false;
    await killPid(this.run.rng.pick(children).pid);
    this.run.stats.kills['stdio-upstream'] += 1;
    return true;
  }

  /** Every process back (no restart pending any more), for the settle phase. */
  async restoreAll(): Promise<void> {
    clearTimeout(this.upstreamTimer);
    this.upstreamTimer = undefined;
    if (this.upstream === undefined || this.upstream.dead) await this.startUpstream();
    for (const replica of this.replicas) {
      if (replica.proc !== undefined && !replica.proc.dead) continue;
      clearTimeout(replica.restartTimer);
      replica.restartTimer = undefined;
      this.startReplica(replica);
    }
    await Promise.all(this.replicas.map((r) => r.proc?.started.catch(() => undefined)));
  }

  /** Kills every process for good: replicas, the HTTP upstream, and every upstream process left behind. */
  async stopAll(): Promise<void> {
    this.hardStop = true;
    clearTimeout(this.upstreamTimer);
    for (const proc of [...this.replicas.map((r) => r.proc), this.upstream]) {
      if (proc === undefined || proc.dead) continue;
      proc.doomed = true;
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
    for (const r of this.replicas) clearTimeout(r.restartTimer);
    await Promise.all(upstreamProcesses(this.run.callsFile).map((p) => killPid(p.pid)));
  }
}
