// The killer of the crash sections: SIGKILLs a process at a point drawn by weight — mid-step, right after a step
// body returned (mid-commit), right after an attempt failed (mid-retry), right after a run ended
// (mid-finish/suspend/wait), while a tasks/update or tools/call is in flight, during start-up — or at random.
import { now, sleep } from '../harness/time.js';
import type { KillPoint } from '../types.js';
import type { Clients } from './clients.js';
import type { Cluster } from './cluster.js';
import type { CrashRun } from './context.js';
import type { Hooks } from './hooks.js';
import type { LogWatch } from './log-watch.js';

export interface KillerParts {
  run: CrashRun;
  cluster: Cluster;
  clients: Clients;
  watch: LogWatch;
  hooks: Hooks;
}

const RUN_ENDS: Record<string, string> = { return: 'mid-finish', input: 'mid-suspend', wait: 'mid-wait' };

/** Kills until the planned number is reached or the chaos time is up; TTL probes start half-way. */
export async function runKills(parts: KillerParts, chaosStarted: number): Promise<void> {
  const { run, cluster, clients } = parts;
  const { params, rng, stats, scope } = run;
  const kills = params.kills ?? 0;
  const pointTable = Object.entries(params.points ?? {}) as [KillPoint, number][];
  let midTtlDone = false;
  while (stats.kills < kills && now() - chaosStarted < params.chaosMs && !scope.closed) {
    await sleep(rng.int(params.gapMinMs, params.gapMaxMs));
    if (!midTtlDone && stats.kills >= kills / 2) {
      midTtlDone = true;
      clients.startTtlProbes();
    }
    const point = rng.weighted(pointTable);
    const done = await killAt(parts, point);
    if (!done) {
      const l = cluster.live();
      if (l.length > 0) await cluster.kill(rng.pick(l), 'random');
    }
    run.progress?.(`${stats.kills}/${kills} kills, ${stats.tasks} tasks`);
  }
}

/** One kill at `point`; false when the moment did not come (then a random process is killed instead). */
async function killAt(parts: KillerParts, point: KillPoint): Promise<boolean> {
  const { cluster, watch } = parts;
  const live = (pid: number): boolean => cluster.livePid(pid);
  switch (point) {
    case 'mid-step':
      return killMidStep(parts);
    case 'mid-commit':
    case 'mid-retry': {
      // mid-retry: right after an attempt failed, before or after the runtime stored the failure and the wait.
      const event = point === 'mid-commit' ? 'step-end' : 'step-fail';
      const line = await watch.waitLine((l) => l.event === event && live(l.pid), 1_500);
      if (line === undefined) return false;
      return cluster.kill(cluster.slotOfPid(line.pid), point, {
        task: line.task,
        run: line.run,
        step: line.detail,
      });
    }
    case 'mid-finish': {
      const line = await watch.waitLine(
        (l) => l.event === 'run-end' && l.detail in RUN_ENDS && live(l.pid),
        1_500,
      );
      if (line === undefined) return false;
      return cluster.kill(cluster.slotOfPid(line.pid), RUN_ENDS[line.detail] as string, {
        task: line.task,
        run: line.run,
      });
    }
    case 'mid-answer':
    case 'mid-create': {
      const slot = await parts.hooks.arm(point === 'mid-answer' ? 'update' : 'create', 1_500);
      if (slot === undefined) return false;
      await sleep(parts.run.rng.int(0, 3));
      return cluster.kill(slot, point);
    }
    case 'mid-startup':
      return killMidStartup(parts);
    case 'random':
      return false;
  }
}

/** A step body still running: one that is running now, or the next to begin. */
async function killMidStep({ run, cluster, watch }: KillerParts): Promise<boolean> {
  let candidates = [...watch.activeSteps.values()].filter((l) => cluster.livePid(l.pid));
  if (candidates.length === 0) {
    const line = await watch.waitLine((l) => l.event === 'step-start' && cluster.livePid(l.pid), 1_500);
    if (line !== undefined) candidates = [line];
  }
  if (candidates.length === 0) return false;
  const c = run.rng.pick(candidates);
  await sleep(run.rng.int(0, Math.max(1, run.params.stepMsMin)));
  if (!watch.activeSteps.has(`${c.task}/${c.run}/${c.detail}`)) return false;
  return cluster.kill(cluster.slotOfPid(c.pid), 'mid-step', { task: c.task, run: c.run, step: c.detail });
}

/** A process that is still starting. */
async function killMidStartup({ run, cluster }: KillerParts): Promise<boolean> {
  const starting = cluster.slots.filter(
    (s) => s.proc !== undefined && !s.proc.ready && !s.proc.dead && !s.proc.doomed,
  );
  if (starting.length === 0) return false;
  await sleep(run.rng.int(0, 400));
  const s = run.rng.pick(starting);
  if (s.proc?.ready) return false;
  return cluster.kill(s, 'mid-startup');
}
