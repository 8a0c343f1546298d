// Section 6, abuse: three principals in two tenants on one `serve` process with an encryption key (SQLite or
// PostgreSQL). After idle baselines of the victim (tools/list p99, one task's time), the attacker builds a backlog of
// tasks, then floods listen streams, unauthenticated uploads, legacy subscriptions and unserializable results while a
// bystander cycles tasks against the storage quota; meanwhile the victim probes tools/list and runs one task behind
// the backlog. Invariants: the server lives, each attack gets its refusal, the victim stays responsive and gets a fair
// share of the workers, memory and storage stay bounded, and the canary is nowhere in the store in the clear.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Invariants } from '../harness/invariants.js';
import { CHAOS_TOOLS, ROOT } from '../harness/paths.js';
import { pgSchema } from '../harness/postgres.js';
import { httpGet } from '../harness/rpc.js';
import { crashExcerpt, killHard, rssOf, startServe } from '../harness/serve.js';
import { now, sleep } from '../harness/time.js';
import { fmtMb, fmtMs, percentile } from '../stats.js';
import type { AbuseParams, SectionContext, SectionResult } from '../types.js';
import { ABUSE_INVARIANTS, AbuseRun, principals, writeTokens } from './abuse-run.js';
import {
  legacyBloat,
  listenFlood,
  storageBloat,
  taskFlood,
  unserializable,
  uploadFlood,
  waitForEnd,
} from './attacks.js';
import { scanPostgres, scanSqlite, type ScanResult } from './canary.js';

const ABUSE_TOOLS = join(ROOT, 'test', 'fixtures', 'tools', 'abuse-tools.mjs');
const IDLE_FACTOR = 50;
const FAIR_FACTOR = 5;
const FAIR_MIN_MS = 3_000;

export interface AbuseOptions extends SectionContext {
  backend: 'sqlite' | 'postgres';
  params: AbuseParams;
}

/** tools/list p99 of the victim over `n` sequential calls. */
async function listP99(a: AbuseRun, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await a.call(a.people.bob, 'tools/list', {}, { agent: a.probeAgent });
    if (r.result !== undefined) times.push(r.ms);
  }
  return percentile(times, 99) ?? 0;
}

/** How long one of the victim's tasks takes from tools/call to its end (and how it ended). */
async function victimTask(a: AbuseRun, fail = false): Promise<{ ms: number; end: string }> {
  const started = now();
  const r = await a.call(a.people.bob, 'tools/call', {
    name: 'abuse_work',
    arguments: { text: `${a.canary} victim`, ms: a.params.workMs, fail },
  });
  const id = r.result?.taskId;
  if (typeof id !== 'string') return { ms: now() - started, end: `not created: ${r.status}` };
  const end = await waitForEnd(a, a.people.bob, id, 120_000);
  return { ms: now() - started, end };
}

function startServer(
  o: AbuseOptions,
  dir: string,
  tokens: string,
  key: string,
): { server: ReturnType<typeof startServe>; dbPath?: string; schema?: string } {
  const { params, scope } = o;
  const common = [
    ...['--host', '127.0.0.1', '--port', '0', '--no-audit', '--log-level', 'error', '--tasks-get-rate', '0'],
    ...['--tools', `${CHAOS_TOOLS},${ABUSE_TOOLS}`, '--auth', tokens, '--encryption-key', key],
    ...['--concurrency', String(params.concurrency), '--max-stored-tasks', String(params.storedLimit)],
    ...['--max-sessions', String(params.sessionLimit)],
  ];
  if (o.backend === 'sqlite') {
    const dbPath = join(dir, 'tasks.db');
    return { server: startServe(scope, [...common, '--store', dbPath]), dbPath };
  }
  const schema = pgSchema(scope, o.pgUrl, 'abuse');
  return { server: startServe(scope, [...common, '--store', o.pgUrl, '--pg-schema', schema]), schema };
}

export async function runAbuse(o: AbuseOptions): Promise<SectionResult> {
  const { params, scope, progress } = o;
  const inv = Invariants.of(ABUSE_INVARIANTS);
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-abuse-');
  const people = principals();
  const tokens = writeTokens(dir, [people.bob, people.mallory, people.alice]);
  const key = `k1:${randomBytes(32).toString('base64')}`;
  const { server, dbPath, schema } = startServer(o, dir, tokens, key);
  await server.started;
  const a = new AbuseRun(server, scope, params, inv, people);
  let sampling = true;
  const sampler = (async () => {
    while (sampling && !scope.closed) {
      const rss = rssOf(server.pid);
      if (rss !== undefined) a.rss.push(rss);
      await sleep(250);
    }
  })();
  try {
    progress?.('idle baselines');
    const idleP99 = await listP99(a, 20);
    const alone: number[] = [];
    for (let i = 0; i < 3; i++) alone.push((await victimTask(a)).ms);
    const aloneMs = alone.sort((x, y) => x - y)[1] as number;
    a.stats.idleListP99Ms = idleP99;
    a.stats.aloneTaskMs = aloneMs;

    progress?.(`attacker backlog of ${params.floodTasks} tasks`);
    const floodIds = await taskFlood(a);
    progress?.('floods');
    let attacking = true;
    const probe = (async () => {
      while (attacking && !scope.closed) {
        const r = await a.call(a.people.bob, 'tools/list', {}, { agent: a.probeAgent });
        if (r.result !== undefined) a.listLatency.push(r.ms);
        else inv.fail('others-responsive', `tools/list during the attacks: ${r.netError ?? r.status}`);
        await sleep(params.probeEveryMs);
      }
    })();
    const [behind, listens] = await Promise.all([
      victimTask(a),
      listenFlood(a, floodIds),
      uploadFlood(a),
      legacyBloat(a),
      unserializable(a),
      storageBloat(a),
    ]).then(([v, l]) => [v, l] as const);
    attacking = false;
    await probe;
    for (const l of listens) l.close();
    a.stats.behindBacklogMs = behind.ms;
    checkService(a, idleP99, aloneMs, behind);

    progress?.('canary');
    const failed = await victimTask(a, true);
    // A thrown error ends the task with an isError result (its message kept), or failed.
    inv.expect(
      'no-plaintext',
      failed.end === 'completed' || failed.end === 'failed',
      `the failing victim task ended ${failed.end}`,
    );
    const health = await httpGet(a.url, '/healthz');
    inv.expect('alive', health.status === 200, `/healthz at the end: ${health.netError ?? health.status}`);
    inv.expect('alive', !server.dead, () => `the server exited: ${crashExcerpt(server.stderr())}`);
  } finally {
    sampling = false;
    await sampler;
    a.close();
    await killHard(server);
  }
  const scan =
    dbPath !== undefined
      ? scanSqlite(dbPath, a.canary, people.bob.tenant)
      : await scanPostgres(o.pgUrl, schema as string, a.canary, people.bob.tenant);
  checkStorage(a, scan);
  summarise(a, started);
  return { inv, stats: a.stats };
}

function checkService(
  a: AbuseRun,
  idleP99: number,
  aloneMs: number,
  behind: { ms: number; end: string },
): void {
  const { inv, params } = a;
  const p99 = percentile(a.listLatency, 99);
  a.stats.attackListP99Ms = p99;
  const bound = Math.max(1_000, IDLE_FACTOR * idleP99);
  inv.expect(
    'others-responsive',
    p99 !== undefined && p99 <= bound,
    () =>
      `tools/list p99 ${fmtMs(p99)} during the attacks (bound ${fmtMs(bound)}; idle p99 ${fmtMs(idleP99)})`,
  );
  const fair = Math.max(FAIR_MIN_MS, FAIR_FACTOR * aloneMs);
  inv.expect(
    'fair-share',
    behind.end === 'completed' && behind.ms <= fair,
    () =>
      `the victim's task behind ${a.stats.floodCreated} of the attacker's ended ${behind.end} after ${fmtMs(behind.ms)} (bound ${fmtMs(fair)}; alone ${fmtMs(aloneMs)})`,
  );
  const rssMax = Math.max(0, ...a.rss);
  a.stats.rssMaxBytes = rssMax;
  inv.expect(
    'bounded-memory',
    rssMax <= params.rssLimitMb * 1048576,
    `server RSS reached ${fmtMb(rssMax)} (limit ${params.rssLimitMb} MB)`,
  );
}

function checkStorage(a: AbuseRun, scan: ScanResult | string): void {
  if (typeof scan === 'string') {
    a.inv.fail('no-plaintext', `the store could not be scanned: ${scan}`);
    return;
  }
  a.stats.storeBytes = scan.bytes;
  a.stats.scannedFiles = scan.files;
  a.inv.expect('no-plaintext', scan.markerSeen, `the scan of ${scan.files} files never saw the clear marker`);
  a.inv.expect(
    'no-plaintext',
    scan.leaks.length === 0,
    () =>
      `the canary is in the clear in ${scan.leaks.map((p) => p.split('/').slice(-2).join('/')).join(', ')}`,
  );
}

function summarise(a: AbuseRun, started: number): void {
  const s = a.stats;
  s.durationMs = now() - started;
  s.summaryLine =
    `backlog ${s.floodCreated} (+${s.floodRefused} refused), victim task ${fmtMs(s.behindBacklogMs)} behind it ` +
    `(${fmtMs(s.aloneTaskMs)} alone), tools/list p99 ${fmtMs(s.attackListP99Ms)} (idle ${fmtMs(s.idleListP99Ms)}), ` +
    `${s.listensRefused} listens, ${s.uploadsRefused} uploads and ${s.sessionsRefused} sessions refused, ${s.storedAccepted} stored, ` +
    `RSS max ${fmtMb(s.rssMaxBytes ?? 0)}, ${s.scannedFiles} store files scanned`;
}
