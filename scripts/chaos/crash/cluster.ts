// The `serve` processes of a crash or clock section: one slot each, started, killed at the driver's word and
// restarted; an exit nobody planned is recorded as a crash.
import { join } from 'node:path';
import { appendLog } from '../harness/log-tail.js';
import { crashExcerpt, startServe, type ServeProcess } from '../harness/serve.js';
import { now, sleep } from '../harness/time.js';
import { tally, type CrashRun } from './context.js';
import type { Kill } from './types.js';

// The clock shim is TypeScript: the clock section's processes load it through tsx (resolved here, so that it
// does not depend on their working directory), which leaves their JavaScript as it is.
const CLOCK_SHIM = join(import.meta.dirname, 'clock-shift.ts');
const TSX = import.meta.resolve('tsx');

export interface Slot {
  i: number;
  proc: ServeProcess | undefined;
  restartTimer: NodeJS.Timeout | undefined;
  /** The file the clock shim reads its offset from (clock section). */
  clockFile: string | undefined;
  offset: number;
}

export class Cluster {
  readonly slots: Slot[];
  /** Exits and start failures nobody planned. */
  readonly unplanned: string[] = [];
  readonly kills: Kill[] = [];
  /** While on, killed processes come back after a random delay; afterwards at once. */
  chaosOn = true;
  /** No more restarts or requests: the section is ending. */
  hardStop = false;

  constructor(
    private readonly run: CrashRun,
    private readonly serveArgs: readonly string[],
    private readonly env: Record<string, string>,
  ) {
    this.slots = Array.from({ length: run.params.servers }, (_, i) => ({
      i,
      proc: undefined,
      restartTimer: undefined,
      clockFile: run.jumping ? join(run.dir, `clock-${i}`) : undefined,
      offset: 0,
    }));
  }

  get stopped(): boolean {
    return this.hardStop || this.run.scope.closed;
  }

  startSlot(slot: Slot): ServeProcess {
    const { scope, stats } = this.run;
    const options =
      slot.clockFile === undefined
        ? { env: this.env, timeoutMs: 30_000 }
        : {
            env: { ...this.env, DURABLE_MCP_CHAOS_CLOCK: slot.clockFile },
            nodeArgs: ['--import', TSX, '--import', CLOCK_SHIM],
            timeoutMs: 30_000,
          };
    const proc = startServe(scope, this.serveArgs, options);
    slot.proc = proc;
    void proc.exited.then(() => {
      if (!proc.doomed && !this.hardStop) {
        this.unplanned.push(`pid ${proc.pid} exited on its own: ${crashExcerpt(proc.stderr())}`);
        this.scheduleRestart(slot, 100);
      }
    });
    proc.started.catch((err: Error) => {
      if (!proc.doomed && !this.hardStop) {
        stats.startFailures += 1;
        this.unplanned.push(`a server failed to start: ${err.message.slice(0, 1_500)}`);
      }
    });
    return proc;
  }

  scheduleRestart(slot: Slot, delay: number): void {
    if (this.hardStop || slot.restartTimer !== undefined) return;
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (this.stopped) return;
      this.run.stats.restarts += 1;
      this.startSlot(slot);
    }, delay);
  }

  live(): Slot[] {
    return this.slots.filter((s) => s.proc?.ready && !s.proc.dead && !s.proc.doomed);
  }

  slotOfPid(pid: number): Slot | undefined {
    return this.slots.find((s) => s.proc?.pid === pid && !s.proc.dead && !s.proc.doomed);
  }

  livePid(pid: number): boolean {
    return this.slotOfPid(pid) !== undefined;
  }

  /** A live process (that `accept`s), waiting for one to come up; undefined once the section stops. */
  async pickLive(accept: (slot: Slot) => boolean = () => true): Promise<Slot | undefined> {
    for (;;) {
      if (this.stopped) return undefined;
      const l = this.live().filter(accept);
      if (l.length > 0) return this.run.rng.pick(l);
      await sleep(20);
    }
  }

  /** SIGKILLs the process of a slot at a kill point (logged) and schedules its restart. */
  async kill(slot: Slot | undefined, point: string, info: Partial<Kill> = {}): Promise<boolean> {
    const { rng, params, stats, logFile } = this.run;
    const proc = slot?.proc;
    if (slot === undefined || proc === undefined || proc.dead || proc.doomed) return false;
    proc.doomed = true;
    proc.child.kill('SIGKILL');
    await proc.exited;
    appendLog(logFile, 'killed', proc.pid);
    this.kills.push({ point, pid: proc.pid, t: now(), ...info });
    stats.kills += 1;
    tally(stats.killsByPoint, point);
    if (this.chaosOn) this.scheduleRestart(slot, rng.int(params.restartMinMs, params.restartMaxMs));
    else this.scheduleRestart(slot, 0);
    return true;
  }

  /** Every process back (no restart pending any more), for the settle phase. */
  async restoreAll(): Promise<void> {
    for (const slot of this.slots) {
      if (slot.proc === undefined || slot.proc.dead || slot.proc.doomed) {
        if (slot.restartTimer !== undefined) clearTimeout(slot.restartTimer);
        slot.restartTimer = undefined;
        if (slot.proc === undefined || slot.proc.dead) this.startSlot(slot);
      }
    }
    await Promise.all(this.slots.map((s) => s.proc?.started.catch(() => undefined)));
  }

  /** Kills every process for good, logged like the driver's kills: a run still open there was interrupted. */
  async stopAll(): Promise<void> {
    this.hardStop = true;
    for (const slot of this.slots) {
      clearTimeout(slot.restartTimer);
      if (slot.proc !== undefined && !slot.proc.dead) {
        slot.proc.doomed = true;
        slot.proc.child.kill('SIGKILL');
        await slot.proc.exited;
        appendLog(this.run.logFile, 'killed', slot.proc.pid);
      }
    }
  }
}
