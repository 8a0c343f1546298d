// Section: operator stream flood. Two operators of tenant A keep opening event streams (/admin/api/v1/events), many
// more than --max-admin-streams and --max-connections allow, while a user of tenant A makes task changes that every
// stream held must receive, and a client of tenant B (the victim, on another address) sends tools/list and /healthz.
// The defences: streams capped per operator and in all (429), each change serialised once for every stream.
import { randomBytes } from 'node:crypto';
import { Invariants } from '../harness/invariants.js';
import { httpGet, rpc } from '../harness/rpc.js';
import { killHard } from '../harness/serve.js';
import { TASK_CAPS } from '../harness/paths.js';
import { now, sleep } from '../harness/time.js';
import { fmtInt, fmtMs } from '../stats.js';
import type { EdgeParams, SectionResult } from '../types.js';
import { holdRequest, type HeldRequest } from '../../../test/support/raw-http.js';
import {
  ABUSE_TOOLS,
  checkAlive,
  checkService,
  during,
  idleP99,
  startEdgeServer,
  STREAM_INVARIANTS,
  writeTokenFile,
  type EdgeStats,
  type Person,
} from './edge-run.js';
import type { EdgeOptions } from './idle-run.js';

const token = (): string => randomBytes(18).toString('base64url');

/** One stream the flood holds: who opened it and what it received. */
interface Held {
  who: string;
  request: HeldRequest;
  text: string;
}

/** The task events a stream received. */
const eventsOf = (h: Held): number => h.text.split('data: {"taskId"').length - 1;

interface Flood {
  attempts: number;
  held: Held[];
  refused: number;
  /** Attempts that were neither a stream nor a 429 too_many_requests (what they got). */
  wrong: string[];
}

/** One attempt: a stream held (its events counted), a refusal checked, or what went wrong. */
async function attempt(port: number, op: Person, flood: Flood): Promise<void> {
  const stream: Held = {
    who: op.principal,
    request: { status: undefined, close: () => undefined },
    text: '',
  };
  stream.request = await holdRequest(port, {
    path: '/admin/api/v1/events',
    method: 'GET',
    headers: { authorization: `Bearer ${op.token}` },
    onData: (chunk) => (stream.text += chunk),
  });
  flood.attempts += 1;
  if (stream.request.status === 200) {
    flood.held.push(stream);
    return;
  }
  // The refusal's body arrives right after its head.
  for (let i = 0; i < 50 && !stream.text.includes('}}'); i += 1) await sleep(10);
  const { status, error } = stream.request;
  if (status === 429 && stream.text.includes('"code":"too_many_requests"')) flood.refused += 1;
  else flood.wrong.push(`${status ?? error}: ${stream.text.slice(0, 120)}`);
}

/** Both operators open streams, a few at a time (never more than the free connections), until the attack ends. */
async function streamFlood(
  port: number,
  ops: Person[],
  p: EdgeParams,
  running: () => boolean,
): Promise<Flood> {
  const flood: Flood = { attempts: 0, held: [], refused: 0, wrong: [] };
  const wave = 4;
  while (running() && flood.attempts < p.streamAttempts * ops.length) {
    await Promise.all(
      Array.from({ length: wave }, (_, i) => attempt(port, ops[i % ops.length] as Person, flood)),
    );
  }
  return flood;
}

/** A user of the operators' tenant changes tasks (each change goes to every stream) until the attack ends. */
async function changes(url: string, user: Person, running: () => boolean): Promise<number> {
  let created = 0;
  while (running()) {
    const r = await rpc(
      url,
      'tools/call',
      { name: 'abuse_work', arguments: { ms: 5 } },
      { token: user.token, caps: TASK_CAPS },
    );
    if (typeof r.result?.taskId === 'string') created += 1;
    await sleep(100);
  }
  return created;
}

function checkStreams(inv: Invariants, flood: Flood, p: EdgeParams, gauge: number | undefined): void {
  const byOperator = new Map<string, number>();
  for (const h of flood.held) byOperator.set(h.who, (byOperator.get(h.who) ?? 0) + 1);
  for (const [who, n] of byOperator)
    inv.expect(
      'streams-capped',
      n <= p.maxAdminStreams,
      `${who} held ${n} streams (cap ${p.maxAdminStreams})`,
    );
  inv.expect(
    'streams-capped',
    flood.held.length <= p.maxAdminStreamsTotal,
    `${flood.held.length} streams held in all (cap ${p.maxAdminStreamsTotal})`,
  );
  inv.expect(
    'streams-capped',
    flood.wrong.length === 0,
    () => `attempts answered otherwise: ${flood.wrong.slice(0, 3).join('; ')}`,
  );
  inv.expect(
    'streams-capped',
    gauge === flood.held.length,
    `durable_mcp_open_subscriptions{kind="operator"} was ${gauge}, ${flood.held.length} streams held`,
  );
  const starved = flood.held.filter((h) => eventsOf(h) === 0).length;
  inv.expect(
    'events-delivered',
    flood.held.length > 0 && starved === 0,
    `${starved} of ${flood.held.length} streams got no task event`,
  );
}

/** The open operator streams the server counts. */
async function operatorGauge(url: string): Promise<number | undefined> {
  const m = await httpGet(url, '/metrics');
  const line = /^durable_mcp_open_subscriptions\{kind="operator"\} (\d+)$/m.exec(m.text ?? '');
  return line === null ? undefined : Number(line[1]);
}

export async function runOperatorStreams(o: EdgeOptions): Promise<SectionResult> {
  const { params: p, scope, progress } = o;
  const inv = Invariants.of(STREAM_INVARIANTS);
  const stats: EdgeStats = {};
  const started = now();
  const dir = scope.tempDir('durable-mcp-chaos-streams-');
  const ops: Person[] = ['ops-1', 'ops-2'].map((principal) => ({
    token: token(),
    tenant: 'A',
    principal,
    roles: ['operator'],
  }));
  const alice: Person = { token: token(), tenant: 'A', principal: 'alice' };
  const bob: Person = { token: token(), tenant: 'B', principal: 'bob' };
  const tokens = writeTokenFile(dir, [...ops, alice, bob]);
  const server = await startEdgeServer(scope, dir, [
    ...['--auth', tokens, '--tools', ABUSE_TOOLS, '--max-connections', String(p.maxConnections)],
    ...[
      '--max-admin-streams',
      String(p.maxAdminStreams),
      '--max-admin-streams-total',
      String(p.maxAdminStreamsTotal),
    ],
  ]);
  let flood: Flood | undefined;
  try {
    progress?.('idle baseline');
    const idle = await idleP99(server.url, bob.token, p.probeEveryMs);
    progress?.(`operators open ${p.streamAttempts} event streams each`);
    const port = server.port as number;
    const run = await during(p.attackMs, p.probeEveryMs, server.url, bob.token, (running) =>
      Promise.all([streamFlood(port, ops, p, running), changes(server.url, alice, running)]),
    );
    flood = run.attack[0];
    checkService(inv, stats, idle, run.probes);
    checkStreams(inv, flood, p, await operatorGauge(server.url));
    Object.assign(stats, {
      streamAttempts: flood.attempts,
      streamsHeld: flood.held.length,
      streamsRefused: flood.refused,
      eventsDelivered: flood.held.reduce((n, h) => n + eventsOf(h), 0),
    });
    await checkAlive(inv, server);
  } finally {
    for (const h of flood?.held ?? []) h.request.close();
    await killHard(server);
  }
  stats.durationMs = now() - started;
  stats.summaryLine =
    `${fmtInt(stats.streamAttempts ?? 0)} event streams asked for by 2 operators, ${stats.streamsHeld} held ` +
    `(caps ${p.maxAdminStreams} each, ${p.maxAdminStreamsTotal} in all), ${fmtInt(stats.streamsRefused ?? 0)} refused with 429, ` +
    `${fmtInt(stats.eventsDelivered ?? 0)} task events delivered; the other tenant ${fmtInt((stats.legitRequests ?? 0) - (stats.legitFailures ?? 0))}/${fmtInt(stats.legitRequests ?? 0)} served, ` +
    `p99 ${fmtMs(stats.attackP99Ms)} (idle ${fmtMs(stats.idleP99Ms)})`;
  return { inv, stats };
}
