// The faults themselves, one cycle after another, each followed by a recovery round: PostgreSQL backends
// terminated, connections refused, reset or black-holed (through the proxy); the SQLite write lock held by a
// foreign connection; the SQLite filesystem filled up.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { pgQuery } from '../harness/postgres.js';
import type { Proxy } from '../harness/proxy.js';
import { now, sleep } from '../harness/time.js';
import { fillDisk } from './disk.js';
import type { FaultRun } from './fault-run.js';
import { followNew, outageProbes, recovery } from './traffic.js';

const count = (f: FaultRun, kind: string): void => {
  f.stats.faults[kind] = (f.stats.faults[kind] ?? 0) + 1;
};

// Kill the server's backends a few times in a row while transactions (tasks/cancel of finished tasks, a
// row-locking no-op) are being started on pooled connections.
async function terminateBackends(f: FaultRun, pgUrl: string, proxy: Proxy, i: number): Promise<void> {
  f.phase = 'terminate';
  const done = f.tasks.filter((t) => t.final !== undefined).slice(-30);
  for (let burst = 0; burst < 3; burst++) {
    const storm = done.map((t) =>
      f.call('tasks/cancel', { taskId: t.taskId }).then((r) => f.record('tasks/cancel', r, 'terminate')),
    );
    await sleep(f.rng.int(0, 5));
    const rows = await pgQuery<{ ok: boolean }>(
      pgUrl,
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE client_addr = '127.0.0.1' AND client_port = ANY($1::int[])`,
      [proxy.upstreamPorts()],
    );
    f.stats.terminated = (f.stats.terminated ?? 0) + rows.filter((r) => r.ok).length;
    await Promise.all(storm);
    await sleep(100);
  }
  await (
    await outageProbes(f, `t${i}`, now() + 300)
  ).done;
}

export async function postgresCycles(
  f: FaultRun,
  pgUrl: string,
  proxy: Proxy,
  progress?: (t: string) => void,
): Promise<void> {
  const { params } = f;
  for (const [i, kind] of params.pgCycles.entries()) {
    progress?.(`fault ${i + 1}/${params.pgCycles.length}: ${kind}`);
    await sleep(f.rng.int(800, 2_000));
    count(f, kind);
    if (kind === 'terminate') await terminateBackends(f, pgUrl, proxy, i);
    else {
      f.phase = kind;
      await proxy.down(kind);
      const probes = await outageProbes(
        f,
        `${kind}${i}`,
        now() + (kind === 'blackhole' ? params.blackholeMs : params.outageMs),
      );
      await proxy.up();
      await probes.done;
    }
    await recovery(f, `${kind} #${i + 1}`);
  }
}

export async function diskFullCycles(
  f: FaultRun,
  dbFile: string,
  progress?: (t: string) => void,
): Promise<void> {
  const { params, stats, inv } = f;
  for (let i = 0; i < params.fullCycles; i++) {
    progress?.(`fault ${i + 1}/${params.fullCycles}: disk full`);
    await sleep(f.rng.int(800, 2_000));
    count(f, 'full');
    const ballast = join(dirname(dbFile), `ballast-${i}`);
    stats.ballastBytes = fillDisk(ballast);
    f.phase = 'full';
    const fullErrorsBefore = stats.fullErrors ?? 0;
    try {
      const probes = await outageProbes(f, `full${i}`, now() + params.fullHoldMs);
      await probes.done;
    } finally {
      rmSync(ballast, { force: true });
    }
    inv.expect(
      'effective',
      (stats.fullErrors ?? 0) > fullErrorsBefore,
      `disk full #${i + 1}: no request was answered SQLITE_FULL while the disk was full`,
    );
    await sleep(100);
    await recovery(f, `disk full #${i + 1}`);
  }
}

/** While the lock is held: a burst of creations (one group-commit batch), then one creation at a time. */
async function underLock(f: FaultRun, i: number): Promise<Promise<unknown>[]> {
  const burst = Array.from({ length: 4 }, (_, n) =>
    f
      .call('tools/call', { name: 'chaos_job', arguments: { cid: `busy${i}-burst${n}`, steps: 1 } })
      .then((r) => {
        if (f.record('tools/call', r, 'busy') === 'ok' && r.result?.resultType === 'task')
          followNew(f, r.result.taskId as string, 'busy');
      }),
  );
  const holdUntil = now() + f.params.busyHoldMs;
  await sleep(200);
  const busyProbes = await outageProbes(f, `busy${i}`, holdUntil - 6_000);
  await sleep(holdUntil - now());
  return [busyProbes.done, ...burst];
}

export async function busyCycles(f: FaultRun, dbFile: string, progress?: (t: string) => void): Promise<void> {
  for (let i = 0; i < f.params.busyCycles; i++) {
    progress?.(`fault ${i + 1}/${f.params.busyCycles}: SQLITE_BUSY`);
    await sleep(f.rng.int(800, 2_000));
    count(f, 'busy');
    // A creation batch that meets SQLITE_BUSY is retried row by row, each waiting out the busy timeout: keep
    // the probe to one creation at a time so the fault stays bounded.
    f.creating = false;
    await sleep(300);
    const locker = new Database(dbFile, { fileMustExist: true });
    locker.pragma('busy_timeout = 10000');
    locker.exec('BEGIN IMMEDIATE');
    f.phase = 'busy';
    let pending: Promise<unknown>[] = [];
    try {
      pending = await underLock(f, i);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    await Promise.all(pending);
    // Answers to requests sent while the lock was held may still arrive now; they count for the busy phase.
    await sleep(100);
    await recovery(f, `SQLITE_BUSY #${i + 1}`);
    f.creating = true;
  }
}
