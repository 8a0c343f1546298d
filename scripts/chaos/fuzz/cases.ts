// The kinds of generated cases of the fuzz section, drawn by weight: random JSON, bytes, truncated, random and
// near-valid messages, valid requests, the tasks surface, and other HTTP methods and paths.
import {
  CORRECT_PLAN,
  headersFor,
  idArb,
  isObject,
  jsonBodyArb,
  mutate,
} from '../../../test/support/fuzz-model.js';
import { validateMessage } from '../../../test/support/schema.js';
import { envelopeMeta, type FuzzRun } from './fuzz-run.js';
import { rawRequest, type RawResult } from './http.js';
import type { RawCase } from './surface.js';

export const KINDS: readonly (readonly [string, number])[] = [
  ['json', 10],
  ['bytes', 10],
  ['truncated', 10],
  ['message', 20],
  ['near-valid', 25],
  ['valid', 10],
  ['tasks', 10],
  ['raw-http', 5],
];

const send = (f: FuzzRun, kind: string, msg: unknown): Promise<void> =>
  f.exchange(kind, JSON.stringify(msg), headersFor(CORRECT_PLAN, msg));

const CASES: Record<string, (f: FuzzRun, kind: string) => Promise<void>> = {
  json: (f, kind) => {
    const value = f.sample('json', jsonBodyArb);
    const plan = f.sample('plan', f.arbs.headerPlan);
    return f.exchange(kind, JSON.stringify(value) ?? 'null', headersFor(plan, value));
  },
  bytes: (f, kind) => {
    const body = f.sample('bytes', f.arbs.bytesArb);
    const plan = f.sample('plan', f.arbs.headerPlan);
    return f.exchange(kind, body, headersFor(plan, undefined));
  },
  truncated: (f, kind) => {
    const req = f.sample('valid', f.arbs.validRequestArb);
    const plan = f.sample('plan', f.arbs.headerPlan);
    const text = JSON.stringify(req);
    return f.exchange(kind, text.slice(0, f.rng.int(0, text.length - 1)), headersFor(plan, req));
  },
  message: (f, kind) => {
    const msg = f.sample('message', f.arbs.messageArb);
    const plan = f.sample('plan', f.arbs.headerPlan);
    return f.exchange(kind, JSON.stringify(msg), headersFor(plan, msg));
  },
  'near-valid': (f, kind) => {
    const base = f.sample('near', f.arbs.nearValidBaseArb);
    const mutations = f.sample('mutations', f.arbs.mutationsArb);
    const { body, headers } = mutate(base, mutations, f.rng.chance(0.5));
    return f.exchange(kind, JSON.stringify(body), headers);
  },
  valid: (f, kind) => {
    const req = f.sample('valid', f.arbs.validRequestArb);
    return send(f, kind, { ...req, id: f.sample('id', idArb) });
  },
  tasks: taskCase,
  'raw-http': rawCase,
};

/** One case of `kind`. */
export function runOne(f: FuzzRun, kind: string): Promise<void> {
  f.count(kind);
  return CASES[kind]?.(f, kind) ?? Promise.resolve();
}

/** Create a task (or try to), then hit the tasks surface with a known task id. */
async function taskCase(f: FuzzRun, kind: string): Promise<void> {
  const t = f.sample('tasks', f.arbs.taskCallArb);
  const create = {
    jsonrpc: '2.0',
    id: f.rng.int(1, 1e6),
    method: 'tools/call',
    params: { name: t.tool, arguments: t.args, _meta: envelopeMeta(t.caps) },
  };
  await send(f, kind, create);
  const taskId = f.rng.pick(f.taskIds);
  const params =
    t.method === 'tasks/update'
      ? { taskId, inputResponses: t.responses }
      : t.method === 'subscriptions/listen'
        ? { notifications: { taskIds: [taskId, `${taskId.slice(0, -1)}x`] } }
        : { taskId };
  const msg = {
    jsonrpc: '2.0',
    id: `t${f.rng.int(0, 1e6)}`,
    method: t.method,
    params: { ...params, _meta: envelopeMeta(t.caps) },
  };
  return send(f, kind, msg);
}

/** Another HTTP method, path or Host header: never 5xx, and JSON-RPC bodies must be valid messages. */
async function rawCase(f: FuzzRun, kind: string): Promise<void> {
  const r = f.sample('raw', f.arbs.rawArb);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (r.host !== undefined) headers.host = r.host;
  const body = r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  let res: RawResult;
  try {
    res = await rawRequest(f.url, { method: r.method, path: r.path, headers, body });
  } catch (err) {
    f.noteFailure(kind, {
      why: `no answer: ${(err as Error).message}`,
      fiveXX: false,
      detail: `${r.method} ${r.path}`,
    });
    return;
  }
  f.noteStatus(res.status);
  if (res.status >= 500) {
    f.noteFailure(kind, {
      why: `5xx answer (${res.status})`,
      fiveXX: true,
      detail: `${r.method} ${r.path} → ${res.text.slice(0, 300)}`,
    });
    return;
  }
  f.inv.ok('no-5xx');
  if (checkRawBody(f, kind, r, res)) f.inv.ok('schema-valid');
}

/** JSON-RPC bodies (errors of the endpoint) must be valid messages; false after a failure was noted. */
function checkRawBody(f: FuzzRun, kind: string, r: RawCase, res: RawResult): boolean {
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json') || res.text.length === 0)
    return true;
  let msg: unknown;
  try {
    msg = JSON.parse(res.text);
  } catch {
    f.noteFailure(kind, {
      why: 'invalid JSON body',
      fiveXX: false,
      detail: `${r.method} ${r.path} → ${res.text.slice(0, 300)}`,
    });
    return false;
  }
  if (!isObject(msg) || msg.jsonrpc !== '2.0') return true;
  const errors = validateMessage(msg);
  if (errors.length === 0) return true;
  f.noteFailure(kind, {
    why: `schema: ${errors.join('; ')}`,
    fiveXX: false,
    detail: `${r.method} ${r.path} ${r.body ?? ''} → ${res.status} ${res.text.slice(0, 300)}`,
  });
  return false;
}
