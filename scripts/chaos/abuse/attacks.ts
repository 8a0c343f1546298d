// The attacks of the abuse section, each bounded: a backlog of tasks, a flood of listen streams, unauthenticated
// uploads, legacy session bloat, unserializable results and create-and-cancel cycles against the storage quota.
import { connect } from 'node:net';
import { subscribe, type Subscription } from '../harness/subscribe.js';
import { sleep } from '../harness/time.js';
import type { AbuseRun, Principal } from './abuse-run.js';

const LEGACY_VERSION = '2025-11-25';

/** Runs `n` jobs, `parallel` at a time. */
async function pool(n: number, parallel: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) await job(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, n) }, worker));
}

/** The attacker's backlog: tasks that each hold a worker; those past a quota must be 429. */
export async function taskFlood(a: AbuseRun): Promise<string[]> {
  const ids: string[] = [];
  let refused = 0;
  await pool(a.params.floodTasks, 16, async (i) => {
    const r = await a.call(a.people.mallory, 'tools/call', {
      name: 'abuse_work',
      arguments: { text: `${a.canary} flood ${i}`, ms: a.params.workMs },
    });
    if (r.result?.resultType === 'task') ids.push(r.result.taskId as string);
    else {
      refused += 1;
      a.inv.expect('refused-cleanly', r.status === 429, () => `flood call ${i}: ${describe(r)}`);
    }
  });
  a.stats.floodCreated = ids.length;
  a.stats.floodRefused = refused;
  return ids;
}

const describe = (r: { status?: number; error?: unknown; netError?: string }): string =>
  `${r.netError ?? r.status} ${JSON.stringify(r.error ?? '').slice(0, 200)}`;

/** Opens `listens` streams as the attacker; those past the per-principal cap must be 429. Returns the open ones. */
export async function listenFlood(a: AbuseRun, taskIds: string[]): Promise<Subscription[]> {
  const open: Subscription[] = [];
  let refused = 0;
  await pool(a.params.listens, 20, async () => {
    const sub = subscribe(a.url, taskIds.slice(0, 20), { token: a.people.mallory.token, timeoutMs: 20_000 });
    try {
      await sub.ack;
      open.push(sub);
    } catch (err) {
      refused += 1;
      const why = (err as Error).message;
      a.inv.expect('refused-cleanly', why.startsWith('not a stream: 429'), `listen: ${why.slice(0, 200)}`);
    }
  });
  a.inv.expect(
    'refused-cleanly',
    open.length <= 100,
    `${open.length} listen streams of one principal were accepted (cap 100)`,
  );
  a.stats.listensRefused = refused;
  return open;
}

/** One unauthenticated upload of `bytes`: the status line the server answered, or the socket's error. */
function upload(url: string, bytes: number): Promise<string> {
  const target = new URL(url);
  return new Promise((resolveUpload) => {
    const s = connect(Number(target.port), target.hostname);
    let head = '';
    const done = (what: string): void => {
      s.destroy();
      resolveUpload(what);
    };
    s.setTimeout(30_000, () => done('timeout'));
    s.on('error', (err: Error & { code?: string }) => done(head || (err.code ?? err.message)));
    s.on('data', (c: Buffer) => {
      head += c.toString('latin1');
      if (head.includes('\r\n')) done(head.slice(0, head.indexOf('\r\n')));
    });
    s.write(
      `POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nContent-Length: ${bytes}\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < bytes && !s.destroyed) {
        const n = Math.min(chunk.length, bytes - sent);
        sent += n;
        if (!s.write(chunk.subarray(0, n))) return void s.once('drain', pump);
      }
    };
    pump();
  });
}

/** Unauthenticated sockets each sending a body just under the limit: 401, not a buffered body. */
export async function uploadFlood(a: AbuseRun): Promise<void> {
  const answers = await Promise.all(
    Array.from({ length: a.params.uploads }, () => upload(a.url, Math.floor(3.9 * 1048576))),
  );
  let refused = 0;
  for (const line of answers) {
    const ok = /^HTTP\/1\.1 (401|503)/.test(line) || line === 'ECONNRESET' || line === 'EPIPE';
    if (ok) refused += 1;
    a.inv.expect('refused-cleanly', ok, `unauthenticated upload: ${line}`);
  }
  a.stats.uploadsRefused = refused;
}

/** A legacy POST as `who` on `session` (if any); the answer's status, session id and JSON body. */
async function legacyPost(
  a: AbuseRun,
  who: Principal,
  session: string | undefined,
  body: object,
): Promise<{ status: number; session: string | null; json: Record<string, unknown> | undefined }> {
  const res = await fetch(a.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${who.token}`,
      ...(session === undefined ? {} : { 'mcp-session-id': session, 'mcp-protocol-version': LEGACY_VERSION }),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(data) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: res.status, session: res.headers.get('mcp-session-id'), json };
}

/** A legacy initialize as the attacker, carrying the canary in its capabilities and client name. */
const initialize = (a: AbuseRun) =>
  legacyPost(a, a.people.mallory, undefined, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: LEGACY_VERSION,
      capabilities: { experimental: { canary: { v: a.canary } } },
      clientInfo: { name: `client ${a.canary}`, version: '1' },
    },
  });

/**
 * Legacy sessions past the per-principal cap (429 beyond it), then subscriptions of 3 MiB each on one of them:
 * -32601 on a server without resources.
 */
export async function legacyBloat(a: AbuseRun): Promise<void> {
  const sessions: string[] = [];
  let refused = 0;
  await pool(a.params.sessionLimit + 10, 8, async () => {
    const init = await initialize(a);
    if (init.session !== null) sessions.push(init.session);
    else {
      refused += 1;
      a.inv.expect('refused-cleanly', init.status === 429, `legacy initialize: ${init.status}`);
    }
  });
  a.stats.sessionsRefused = refused;
  a.inv.expect(
    'refused-cleanly',
    sessions.length === a.params.sessionLimit,
    `${sessions.length} legacy sessions of one principal were opened (cap ${a.params.sessionLimit})`,
  );
  const session = sessions[0];
  if (session === undefined) return;
  const uri = `file:///${'x'.repeat(3 * 1048576)}`;
  for (let i = 0; i < a.params.bloatSubscribes; i++) {
    const r = await legacyPost(a, a.people.mallory, session, {
      jsonrpc: '2.0',
      id: 10 + i,
      method: 'resources/subscribe',
      params: { uri },
    });
    const code = (r.json?.error as { code?: number } | undefined)?.code;
    a.inv.expect('refused-cleanly', code === -32601, () => `legacy subscribe: ${r.status} ${code}`);
  }
}

/** Tools whose results cannot be serialized, synchronously (-32603) and as tasks (which fail). */
export async function unserializable(a: AbuseRun): Promise<void> {
  const kinds = ['bigint', 'cycle', 'getter'];
  for (let i = 0; i < a.params.unserializable; i++) {
    const kind = kinds[i % kinds.length] as string;
    const r = await a.call(a.people.mallory, 'tools/call', { name: `bad_${kind}`, arguments: {} });
    a.inv.expect('refused-cleanly', r.error?.code === -32603, () => `bad_${kind}: ${describe(r)}`);
  }
  const task = await a.call(a.people.mallory, 'tools/call', { name: 'bad_bigint_task', arguments: {} });
  const id = task.result?.taskId;
  if (!a.inv.expect('refused-cleanly', typeof id === 'string', `bad_bigint_task: ${describe(task)}`)) return;
  const end = await waitForEnd(a, a.people.mallory, id as string, 60_000);
  a.inv.expect('refused-cleanly', end === 'failed', `bad_bigint_task ended ${end}`);
}

/** Polls a task until it ends; its final status, or 'timeout'. */
export async function waitForEnd(
  a: AbuseRun,
  who: Principal,
  id: string,
  timeoutMs: number,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await a.call(who, 'tasks/get', { taskId: id });
    const status = r.result?.status;
    if (status === 'completed' || status === 'failed' || status === 'cancelled') return status;
    await sleep(25);
  }
  return 'timeout';
}

/** Create-and-cancel cycles by a principal with no other task: exactly the storage quota is accepted. */
export async function storageBloat(a: AbuseRun): Promise<void> {
  const who = a.people.alice;
  let accepted = 0;
  for (let i = 0; i < a.params.storedLimit + 3; i++) {
    const r = await a.call(who, 'tools/call', {
      name: 'abuse_work',
      arguments: { text: `${a.canary} cycle ${i}`, ms: 0 },
    });
    const id = r.result?.taskId;
    if (typeof id !== 'string') {
      const quota = (r.error?.data as { quota?: string } | undefined)?.quota;
      a.inv.expect(
        'bounded-storage',
        r.status === 429 && quota === 'stored',
        () => `cycle ${i}: ${describe(r)}`,
      );
      continue;
    }
    accepted += 1;
    await a.call(who, 'tasks/cancel', { taskId: id });
  }
  a.stats.storedAccepted = accepted;
  a.inv.expect(
    'bounded-storage',
    accepted === a.params.storedLimit,
    `${accepted} create-and-cancel cycles were accepted (storage quota ${a.params.storedLimit})`,
  );
}
