// The parallel-steps sections: `serve` processes on one store run chaos_parallel tasks (a step, then ctx.map beside
// a step, then a step: test/fixtures/tools/chaos-tools.mjs) while the driver SIGKILLs them. Afterwards the store and
// the per-run log must show every task completed, no step committed and then run again by a later run, every kept
// value the effect of one body, and results that hold the kept values in item order.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Invariants } from '../harness/invariants.js';
import { appendLog, LogTail } from '../harness/log-tail.js';
import { CHAOS_TOOLS, COMMON_SERVE_FLAGS } from '../harness/paths.js';
import { pgQuery, pgSchema, pgTable } from '../harness/postgres.js';
import { rng as makeRng, type Rng } from '../harness/random.js';
import { rpc, type RpcResult } from '../harness/rpc.js';
import { crashExcerpt, killHard, startServe, type ServeProcess } from '../harness/serve.js';
import { now, sleep } from '../harness/time.js';
import { fmtInt, fmtMs } from '../stats.js';
import type { ParallelParams, SectionContext, SectionResult } from '../types.js';
import { byTask, checkTask, PARALLEL_INVARIANTS, type ParallelStats, type Stored } from './check.js';

export { PARALLEL_INVARIANTS, type ParallelStats } from './check.js';

type Location = { backend: 'sqlite'; file: string } | { backend: 'postgres'; url: string; schema: string };

interface Slot {
  proc: ServeProcess | undefined;
  restart: NodeJS.Timeout | undefined;
}

const TASK = 'chaos_parallel';
async function readStored(at: Location): Promise<Stored> {
  if (at.backend === 'sqlite') {
    const db = new Database(at.file, { fileMustExist: true });
    try {
      return {
        tasks: db.prepare('SELECT id, status, result FROM tasks').all() as Stored['tasks'],
        steps: db.prepare('SELECT task_id, name, value, saved_at FROM task_steps').all() as Stored['steps'],
      };
    } finally {
      db.close();
    }
  }
  const t = (table: string): string => pgTable(at.schema, table);
  const [tasks, steps] = await Promise.all([
    pgQuery<Stored['tasks'][number]>(at.url, `SELECT id, status, result::text AS result FROM ${t('tasks')}`),
    pgQuery<Stored['steps'][number]>(
      at.url,
      `SELECT task_id, name, value::text AS value, saved_at::float8 AS saved_at FROM ${t('task_steps')}`,
    ),
  ]);
  return { tasks, steps };
}

/** The serve processes: started, killed at the driver's word and restarted after a while. */
class Fleet {
  readonly slots: Slot[];
  readonly unplanned: string[] = [];
  kills = 0;
  chaosOn = true;
  stopped = false;

  constructor(
    private readonly ctx: SectionContext,
    private readonly args: readonly string[],
    private readonly logFile: string,
    params: ParallelParams,
  ) {
    this.slots = Array.from({ length: params.servers }, () => ({ proc: undefined, restart: undefined }));
  }

  start(slot: Slot): void {
    if (this.stopped) return;
    const proc = startServe(this.ctx.scope, this.args, {
      env: { DURABLE_MCP_TEST_LOG: this.logFile },
      timeoutMs: 30_000,
    });
    slot.proc = proc;
    proc.started.catch((err: Error) => {
      if (!proc.doomed && !this.stopped)
        this.unplanned.push(`a server failed to start: ${err.message.slice(0, 500)}`);
    });
    void proc.exited.then(() => {
      if (!proc.doomed && !this.stopped)
        this.unplanned.push(`a server exited: ${crashExcerpt(proc.stderr())}`);
    });
  }

  live(rng: Rng): ServeProcess | undefined {
    const up = this.slots.map((s) => s.proc).filter((p): p is ServeProcess => p?.ready === true);
    return up.length === 0 ? undefined : rng.pick(up);
  }

  async kill(rng: Rng, restartMaxMs: number): Promise<boolean> {
    const slot = rng.pick(this.slots.filter((s) => s.proc?.ready === true));
    const proc = slot?.proc;
    if (slot === undefined || proc === undefined) return false;
    proc.doomed = true;
    await killHard(proc);
    appendLog(this.logFile, 'killed', proc.pid);
    this.kills++;
    slot.restart = setTimeout(() => this.start(slot), this.chaosOn ? rng.int(0, restartMaxMs) : 0);
    return true;
  }

  /** Every slot up again (those waiting for a restart started at once). */
  async allUp(): Promise<void> {
    this.chaosOn = false;
    for (const slot of this.slots) {
      if (slot.proc !== undefined && !slot.proc.dead) continue;
      clearTimeout(slot.restart);
      this.start(slot);
    }
    await Promise.allSettled(this.slots.map((s) => s.proc?.started));
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    for (const slot of this.slots) clearTimeout(slot.restart);
    await Promise.all(
      this.slots.map(async (s) => {
        if (s.proc === undefined) return;
        s.proc.doomed = true;
        await killHard(s.proc);
      }),
    );
  }
}

/** Creates the tasks (each under an idempotency key, asked again after a lost answer): their ids. */
async function createTasks(
  fleet: Fleet,
  rng: Rng,
  params: ParallelParams,
  deadline: number,
): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const createOne = async (): Promise<void> => {
    for (;;) {
      const n = next++;
      if (n >= params.tasks) return;
      const key = `parallel-${n}-${rng.hex(8)}`;
      const args = { cid: key, items: params.items, concurrency: params.mapConcurrency, ms: params.stepMs };
      for (let attempt = 0; now() < deadline; attempt++) {
        const proc = fleet.live(rng);
        const r: RpcResult =
          proc === undefined
            ? { netError: 'stopped', ms: 0 }
            : await rpc(
                proc.url,
                'tools/call',
                { name: TASK, arguments: args },
                {
                  meta: { 'dev.durable-mcp/idempotencyKey': key },
                  timeoutMs: 10_000,
                },
              );
        if (r.result?.taskId !== undefined) {
          ids.push(r.result.taskId);
          break;
        }
        await sleep(50);
      }
      // Spreads the tasks over the chaos.
      await sleep(rng.int(0, params.gapMaxMs));
    }
  };
  await Promise.all(Array.from({ length: params.inflight }, createOne));
  return ids;
}

/** Waits until every task is terminal in the store (or the deadline). */
async function settle(at: Location, ids: string[], deadline: number): Promise<void> {
  const wanted = new Set(ids);
  while (now() < deadline) {
    const { tasks } = await readStored(at);
    const open = tasks.filter(
      (t) => wanted.has(t.id) && (t.status === 'working' || t.status === 'input_required'),
    );
    if (open.length === 0) return;
    await sleep(200);
  }
}

function locate(ctx: SectionContext, backend: 'sqlite' | 'postgres', dir: string): [Location, string[]] {
  if (backend === 'sqlite') {
    const file = join(dir, 'tasks.db');
    return [{ backend, file }, ['--store', file]];
  }
  const schema = pgSchema(ctx.scope, ctx.pgUrl, 'parallel');
  return [
    { backend, url: ctx.pgUrl, schema },
    ['--store', ctx.pgUrl, '--pg-schema', schema, '--pg-pool-size', '4'],
  ];
}

export async function runParallel(
  ctx: SectionContext & { backend: 'sqlite' | 'postgres'; params: ParallelParams },
): Promise<SectionResult> {
  const started = now();
  const { params, backend } = ctx;
  const inv = Invariants.of(PARALLEL_INVARIANTS);
  const stats: ParallelStats = { tasks: 0, kills: 0, runs: 0, rerunBodies: 0, partialReplays: 0 };
  const rng = makeRng(ctx.seed);
  const dir = ctx.scope.tempDir('durable-mcp-chaos-parallel-');
  const logFile = join(dir, 'runs.log');
  writeFileSync(logFile, '');
  const [at, storeArgs] = locate(ctx, backend, dir);
  const args = [
    ...COMMON_SERVE_FLAGS,
    ...storeArgs,
    ...[
      '--tools',
      CHAOS_TOOLS,
      '--lease-ms',
      String(params.leaseMs),
      '--concurrency',
      String(params.concurrency),
    ],
  ];
  const fleet = new Fleet(ctx, args, logFile, params);
  for (const slot of fleet.slots) fleet.start(slot);
  await Promise.all(fleet.slots.map((s) => s.proc?.started));
  const deadline = started + params.boundMs - 10_000;

  const chaosEnd = now() + params.chaosMs;
  const creating = createTasks(fleet, rng, params, chaosEnd);
  while (now() < chaosEnd && fleet.kills < params.kills) {
    await sleep(rng.int(params.gapMinMs, params.gapMaxMs));
    await fleet.kill(rng, params.restartMaxMs);
    ctx.progress?.(`parallel-${backend}: ${fleet.kills} kills`);
  }
  const ids = await creating;
  inv.expect('kills', fleet.kills >= params.kills, `only ${fleet.kills} of ${params.kills} kills`);
  const settleFrom = now();
  await fleet.allUp();
  await settle(at, ids, deadline);
  stats.settleMs = now() - settleFrom;
  await fleet.stopAll();
  for (const u of fleet.unplanned) inv.fail('no-crash', u);
  inv.ok('no-crash', fleet.kills + params.servers - fleet.unplanned.length);

  const stored = await readStored(at);
  const tail = new LogTail(logFile);
  const logs = byTask(tail.read());
  tail.close();
  const mine = new Set(ids);
  inv.expect(
    'terminal',
    ids.length === params.tasks,
    `only ${ids.length} of ${params.tasks} tasks were created`,
  );
  for (const task of stored.tasks.filter((t) => mine.has(t.id))) {
    const log = logs.get(task.id);
    stats.runs += log?.runStart.size ?? 0;
    checkTask(
      inv,
      stats,
      params.items,
      task,
      stored.steps.filter((s) => s.task_id === task.id),
      log,
    );
  }
  Object.assign(stats, { tasks: ids.length, kills: fleet.kills, durationMs: now() - started });
  stats.summaryLine =
    `${fmtInt(stats.kills)} kills; ${fmtInt(stats.tasks)} tasks of ${params.items} map items beside a step, ` +
    `${fmtInt(stats.runs)} runs, ${fmtInt(stats.partialReplays)} replayed some parallel steps and ran the others, ` +
    `${fmtInt(stats.rerunBodies)} bodies begun again after a cut; settled in ${fmtMs(stats.settleMs)}`;
  return { inv, stats };
}
