// A stand-in for the server's operator API (/admin/api/v1) on 127.0.0.1, written from its spec, for the `durable-mcp
// admin` CLI tests: bearer auth, the CSRF token of GET /session on actions, strict query checks, keyset-like cursors.
// It records every request so that tests can assert what the CLI sent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const OPERATOR_TOKEN = 'operator-secret-token';
export const USER_TOKEN = 'plain-user-secret-token';
export const CSRF_TOKEN = 'csrf-7f3a';
export const SESSION_COOKIE = 'admin_session=s-1';

export interface FakeTask {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  toolVersion?: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  /** How a finished task ended (tool_error: completed with a tool error). */
  outcome?: 'completed' | 'tool_error' | 'failed' | 'cancelled';
  createdAt: number;
  updatedAt: number;
  attempt: number;
  error?: { code: number; message: string; outcome?: string };
  cancelRequested?: boolean;
  /** A gateway task's upstream call, as the detail shows it. */
  upstream?: Record<string, unknown>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  csrf: string | undefined;
  cookie: string | undefined;
}

export interface FakeAdminApi {
  /** e.g. http://127.0.0.1:PORT/mcp, as --url. */
  url: string;
  requests: RecordedRequest[];
  tasks: Map<string, FakeTask>;
  close(): Promise<void>;
}

const BASE = '/admin/api/v1';
const LIST_KEYS = new Set(
  'tenant principal tool toolVersion status outcome createdFrom createdTo updatedFrom updatedTo hasError errorText errorOutcome sort order limit cursor'.split(
    ' ',
  ),
);
const STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const OUTCOMES = ['completed', 'tool_error', 'failed', 'cancelled'];
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message = code,
  ) {
    super(message);
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

function time(q: Record<string, string>, key: string): number | undefined {
  const v = q[key];
  if (v === undefined) return undefined;
  const ms = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms)) throw new HttpError(400, 'bad_request', `${key} must be a time`);
  return ms;
}

const row = (t: FakeTask) => ({
  id: t.id,
  tenant: t.tenant,
  principal: t.principal,
  tool: t.tool,
  ...(t.toolVersion === undefined ? {} : { toolVersion: t.toolVersion }),
  status: t.status,
  ...(t.outcome === undefined ? {} : { outcome: t.outcome }),
  createdAt: iso(t.createdAt),
  updatedAt: iso(t.updatedAt),
  attempt: t.attempt,
  ...(t.error === undefined ? {} : { error: t.error }),
});

function matches(t: FakeTask, q: Record<string, string>): boolean {
  const statuses = q.status?.split(',');
  if (statuses?.some((s) => !STATUSES.includes(s))) throw new HttpError(400, 'bad_request', 'unknown status');
  const outcomes = q.outcome?.split(',');
  if (outcomes?.some((o) => !OUTCOMES.includes(o)))
    throw new HttpError(400, 'bad_request', 'unknown outcome');
  const within = (at: number, from?: number, to?: number) =>
    (from === undefined || at >= from) && (to === undefined || at < to);
  return (
    (q.tenant === undefined || t.tenant === q.tenant) &&
    (q.principal === undefined || t.principal === q.principal) &&
    (q.tool === undefined || t.tool === q.tool) &&
    (q.toolVersion === undefined || t.toolVersion === q.toolVersion) &&
    (statuses === undefined || statuses.includes(t.status)) &&
    (outcomes === undefined || (t.outcome !== undefined && outcomes.includes(t.outcome))) &&
    within(t.createdAt, time(q, 'createdFrom'), time(q, 'createdTo')) &&
    within(t.updatedAt, time(q, 'updatedFrom'), time(q, 'updatedTo')) &&
    (q.hasError === undefined || (t.error !== undefined) === (q.hasError === 'true')) &&
    (q.errorText === undefined ||
      (t.error?.message.toLowerCase().includes(q.errorText.toLowerCase()) ?? false)) &&
    (q.errorOutcome === undefined || t.error?.outcome === q.errorOutcome)
  );
}

function list(tasks: Map<string, FakeTask>, q: Record<string, string>) {
  for (const key of Object.keys(q))
    if (!LIST_KEYS.has(key)) throw new HttpError(400, 'bad_request', `unknown parameter ${key}`);
  const limit = Number(q.limit ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new HttpError(400, 'bad_request', 'limit must be 1..500');
  if (q.hasError !== undefined && q.hasError !== 'true' && q.hasError !== 'false')
    throw new HttpError(400, 'bad_request', 'hasError must be true or false');
  const offset = q.cursor === undefined ? 0 : Number(/^c(\d+)$/.exec(q.cursor)?.[1] ?? NaN);
  if (!Number.isInteger(offset)) throw new HttpError(400, 'bad_request', 'malformed cursor');
  const key = q.sort === 'updated' ? 'updatedAt' : 'createdAt';
  const sign = q.order === 'asc' ? 1 : -1;
  const found = [...tasks.values()]
    .filter((t) => matches(t, q))
    .sort((a, b) => sign * (a[key] - b[key]) || a.id.localeCompare(b.id));
  const items = found.slice(offset, offset + limit).map(row);
  return offset + limit < found.length ? { items, next: `c${offset + limit}` } : { items };
}

const stepTimes = (startedAt: number, durationMs: number) => ({
  startedAt: iso(startedAt),
  savedAt: iso(startedAt + durationMs),
  durationMs,
});

function detail(t: FakeTask) {
  return {
    ...row(t),
    expiresAt: iso(t.createdAt + 3_600_000),
    cancelRequested: t.cancelRequested === true,
    ...(t.upstream === undefined ? {} : { upstream: t.upstream }),
    ...(t.status === 'working' ? { leaseOwner: 'worker-a', leaseUntil: iso(t.updatedAt + 30_000) } : {}),
    steps: [
      { name: 'fetch', done: t.status !== 'failed', failedAttempts: t.status === 'failed' ? 3 : 0 },
      ...(t.status === 'failed'
        ? []
        : [{ name: 'render', done: t.status === 'completed', failedAttempts: 0 }]),
    ].map((s) =>
      s.failedAttempts === 0
        ? s.done
          ? { ...s, ...stepTimes(t.createdAt + 1_000, 12) }
          : s
        : {
            ...s,
            lastFailure: {
              attempt: 3,
              name: 'Error',
              message: 'upstream 502',
              at: iso(t.updatedAt),
              final: true,
            },
          },
    ),
    history: [
      { at: iso(t.createdAt), status: 'working', statusMessage: 'Queued.' },
      ...(t.status === 'working' ? [] : [{ at: iso(t.updatedAt), status: t.status }]),
    ],
    ...(t.status === 'failed'
      ? {
          failure: {
            ref: 'err_1',
            name: 'Error',
            message: 'upstream 502',
            step: 'fetch',
            attempt: 3,
            at: iso(t.updatedAt),
          },
        }
      : {}),
  };
}

function overview(tasks: Map<string, FakeTask>, q: Record<string, string>) {
  const windows = (q.windows ?? '').split(',').map(Number);
  const stuckMs = Number(q.stuckMs);
  if (windows.some((w) => !Number.isInteger(w) || w <= 0) || !Number.isInteger(stuckMs))
    throw new HttpError(400, 'bad_request', 'windows and stuckMs must be ms');
  const all = [...tasks.values()];
  const byStatus = Object.fromEntries(STATUSES.map((s) => [s, all.filter((t) => t.status === s).length]));
  const byTool = new Map<string, { tool: string; toolVersion?: string; status: string; count: number }>();
  for (const t of all) {
    const k = `${t.tool}@${t.toolVersion}/${t.status}`;
    const entry = byTool.get(k) ?? { tool: t.tool, toolVersion: t.toolVersion, status: t.status, count: 0 };
    entry.count += 1;
    byTool.set(k, entry);
  }
  const byOutcome = Object.fromEntries(OUTCOMES.map((o) => [o, all.filter((t) => t.outcome === o).length]));
  return {
    byStatus,
    byOutcome,
    byTool: [...byTool.values()],
    windows: windows.map((windowMs) => ({
      windowMs,
      created: all.length,
      completed: 1,
      failed: 1,
      toolErrors: 0,
    })),
    stuck: all.filter((t) => !TERMINAL.has(t.status) && Date.now() - t.updatedAt >= stuckMs).length,
  };
}

function action(tasks: Map<string, FakeTask>, req: RecordedRequest, id: string, verb: string | undefined) {
  if (req.csrf !== CSRF_TOKEN) throw new HttpError(403, 'csrf', 'missing or wrong CSRF token');
  const t = tasks.get(id);
  if (t === undefined) throw new HttpError(404, 'not_found', 'task not found');
  if (req.method === 'POST' && verb === 'cancel') {
    if (TERMINAL.has(t.status)) throw new HttpError(409, 'terminal', 'the task is finished');
    t.cancelRequested = true;
  } else if (req.method === 'POST' && verb === 'retry') {
    if (t.outcome !== 'failed' && t.outcome !== 'tool_error')
      throw new HttpError(409, 'not_failed', 'the task has not failed');
    // A new task, from the task's last finished step; the task itself stays as it ended.
    const taskId = `${id}_retry${tasks.size}`;
    tasks.set(taskId, {
      ...t,
      id: taskId,
      status: 'working',
      outcome: undefined,
      error: undefined,
      attempt: 0,
    });
    return { ok: true, taskId };
  } else if (req.method === 'DELETE' && verb === undefined) {
    if (!TERMINAL.has(t.status)) throw new HttpError(409, 'not_terminal', 'the task is not finished');
    tasks.delete(id);
  } else throw new HttpError(404, 'not_found', 'no such route');
  return { ok: true };
}

function route(
  api: { tasks: Map<string, FakeTask>; surface: boolean; sessionCsrf: string },
  req: RecordedRequest,
): unknown {
  if (!api.surface || !req.path.startsWith(`${BASE}/`)) throw new HttpError(404, 'not_found', 'not found');
  if (req.authorization === `Bearer ${USER_TOKEN}`) throw new HttpError(403, 'forbidden', 'not an operator');
  if (req.authorization !== `Bearer ${OPERATOR_TOKEN}`)
    throw new HttpError(401, 'unauthorized', 'unauthorized');
  const parts = req.path
    .slice(BASE.length + 1)
    .split('/')
    .map(decodeURIComponent);
  const [resource, id, verb, ...rest] = parts;
  if (req.method === 'GET' && parts.length === 1 && resource === 'session')
    return { principal: 'oncall', tenant: 'ops', operator: { tenants: 'all' }, csrfToken: api.sessionCsrf };
  if (req.method === 'GET' && parts.length === 1 && resource === 'overview')
    return overview(api.tasks, req.query);
  if (req.method === 'GET' && parts.length === 1 && resource === 'health')
    return {
      components: [
        {
          kind: 'upstream',
          name: 'stdio:node up.mjs',
          status: 'down',
          since: '2026-01-10T00:05:00.000Z',
          calls: 12,
          errors: 2,
          meanMs: 40,
          metrics: ['durable_mcp_upstream_up{upstream="node"}'],
        },
      ],
    };
  if (resource !== 'tasks' || rest.length > 0) throw new HttpError(404, 'not_found', 'no such route');
  if (req.method === 'GET' && id === undefined) return list(api.tasks, req.query);
  if (req.method === 'GET' && id !== undefined && verb === undefined) {
    const t = api.tasks.get(id);
    if (t === undefined) throw new HttpError(404, 'not_found', 'task not found');
    return detail(t);
  }
  if (id !== undefined && req.method !== 'GET') return action(api.tasks, req, id, verb);
  throw new HttpError(404, 'not_found', 'no such route');
}

function record(req: IncomingMessage): RecordedRequest {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    authorization: req.headers.authorization,
    csrf: req.headers['x-csrf-token'] as string | undefined,
    cookie: req.headers.cookie,
  };
}

export interface FakeOptions {
  /** false: 404 everywhere, as a server without an operator API. */
  surface?: boolean;
  /** The csrfToken GET /session hands out (default the one actions need; another one makes them 403 csrf). */
  sessionCsrf?: string;
}

export async function startFakeAdminApi(tasks: FakeTask[], options: FakeOptions = {}): Promise<FakeAdminApi> {
  const state = {
    tasks: new Map(tasks.map((t) => [t.id, { ...t }])),
    surface: options.surface ?? true,
    sessionCsrf: options.sessionCsrf ?? CSRF_TOKEN,
  };
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const recorded = record(req);
    requests.push(recorded);
    let status = 200;
    let body: unknown;
    try {
      body = route(state, recorded);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      status = err.status;
      body = { error: { code: err.code, message: err.message } };
    }
    const cookie = recorded.path === `${BASE}/session` && status === 200;
    res.writeHead(status, {
      'content-type': 'application/json',
      ...(cookie ? { 'set-cookie': `${SESSION_COOKIE}; Path=/admin; HttpOnly; SameSite=Strict` } : {}),
    });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    tasks: state.tasks,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
