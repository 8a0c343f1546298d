// The routes that deliver events from outside to tasks (ctx.waitForEvent), routes of the HTTP edge (after its Host and
// Origin checks): `POST /callbacks/{token}` for whoever holds a signed callback URL (ctx.callbackUrl; the one
// unauthenticated route besides the health checks: rate-limited per client address), and
// `POST /tasks/{id}/events/{name}` for the task's owner, with the credentials of /mcp. The body is the event's JSON
// payload, bounded. Every refusal says only what its sender may know: a forged token, someone else's task and a task
// that never existed are all 404.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../auth/authenticator.js';
import type { AuditLog } from '../protocol/audit.js';
import { compileSchema, type ArgumentValidator } from '../protocol/schema-validation.js';
import type { JsonObject } from '../protocol/types.js';
import type { CallbackTokens } from '../tasks/callback-tokens.js';
import {
  EVENT_REFUSAL_CODES,
  eventNameProblem,
  MAX_EVENT_PAYLOAD_BYTES,
  type EventSender,
  type OutsideEventPort,
} from '../tasks/events.js';
import { BodyTooLargeError, readBody } from '../transport/http/body.js';
import type { HeaderLookup } from '../wire/headers.js';
import { createClientBuckets, type ClientBuckets } from './buckets.js';

export interface EventRouteOptions {
  /** The store's events port. */
  events: OutsideEventPort;
  authenticator: Authenticator;
  /** The signed callback URLs' tokens (the backend's secret); without them `/callbacks/…` is 404. */
  tokens?: CallbackTokens;
  now?: () => number;
  audit?: AuditLog;
  onError?: (err: unknown) => void;
  /** Told of each response: `events <route>`, the HTTP status and the duration. */
  onResponse?: (method: string, status: number, durationMs: number) => void;
  /**
   * Callback requests each client address may send: `perSecond` on average, up to `burst` at once (default 10 and
   * 20); more are refused with 429.
   */
  callbackRate?: { perSecond: number; burst: number };
  /** The client address a request counts against (default the connection's peer address). */
  clientAddress?: (req: IncomingMessage) => string;
}

export type EventRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The longest task id accepted in a path (ids the server makes are far shorter). */
const MAX_ID = 256;
/** Compiled schemas kept (by their JSON text): waits of one tool share theirs. */
const SCHEMA_CACHE = 200;

type Matched =
  | { route: 'callback'; token: string }
  | { route: 'owner'; taskId: string; name: string }
  | { route: 'bad'; message: string };

const decoded = (part: string): string | undefined => {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
};

/** The route a path names, undefined for none of these. */
export function matchEventRoute(pathname: string): Matched | undefined {
  const parts = pathname.split('/');
  if (parts.length === 3 && parts[1] === 'callbacks') return { route: 'callback', token: parts[2] ?? '' };
  if (parts.length !== 5 || parts[1] !== 'tasks' || parts[3] !== 'events') return undefined;
  const taskId = decoded(parts[2] ?? '');
  const name = decoded(parts[4] ?? '');
  if (taskId === undefined || taskId === '' || taskId.length > MAX_ID)
    return { route: 'bad', message: 'Malformed task id' };
  const problem = name === undefined ? 'malformed event name' : eventNameProblem(name);
  if (problem !== undefined || name === undefined)
    return { route: 'bad', message: `Bad event name: ${problem}` };
  return { route: 'owner', taskId, name };
}

/** The statuses of the answers (`{"error":{"code","message"}}` for refusals). */
const STATUS = {
  accepted: 202,
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  too_large: 413,
  unsupported_media_type: 415,
  invalid: 422,
  too_many_requests: 429,
  internal: 500,
} as const;

type Code = Exclude<keyof typeof STATUS, 'accepted'>;

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

const refuse = (res: ServerResponse, code: Code, message: string, headers?: Record<string, string>): void =>
  send(res, STATUS[code], { error: { code, message } }, headers);

const headerOf =
  (req: IncomingMessage): HeaderLookup =>
  (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };

interface Routes {
  readonly options: EventRouteOptions;
  readonly now: () => number;
  readonly buckets: ClientBuckets;
  readonly check: (schema: JsonObject, payload: unknown) => string | undefined;
}

/** Checks payloads against the schemas waits registered, compiled once per schema (a bounded cache). */
export function eventSchemaChecker(): (schema: JsonObject, payload: unknown) => string | undefined {
  const compiled = new Map<string, ArgumentValidator>();
  return (schema, payload) => {
    const key = JSON.stringify(schema);
    let validate = compiled.get(key);
    if (validate === undefined) {
      if (compiled.size >= SCHEMA_CACHE) compiled.clear();
      validate = compileSchema(schema, 'payload');
      compiled.set(key, validate);
    }
    const checked = validate(payload);
    return checked.ok ? undefined : checked.reason;
  };
}

/** The port with its deliveries checked against their waits' schemas (unless the delivery brings its own check). */
export function checkedEvents(port: OutsideEventPort): OutsideEventPort {
  const check = eventSchemaChecker();
  return {
    deliver: (delivery, now) => port.deliver({ check, ...delivery }, now),
    wait: (...args) => port.wait(...args),
  };
}

export function createEventRoutes(options: EventRouteOptions): EventRoute {
  const rate = options.callbackRate ?? { perSecond: 10, burst: 20 };
  const routes: Routes = {
    options,
    now: options.now ?? Date.now,
    buckets: createClientBuckets(rate.perSecond, rate.burst),
    check: eventSchemaChecker(),
  };
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const matched = matchEventRoute(q === -1 ? url : url.slice(0, q));
    if (matched === undefined) return false;
    if (matched.route === 'callback' && options.tokens === undefined) return false;
    report(
      options,
      res,
      `events ${req.method ?? ''} ${matched.route === 'callback' ? 'callbacks' : 'tasks/{id}/events'}`,
    );
    serve(routes, req, res, matched)
      .catch((err: unknown) => {
        options.onError?.(err);
        refuse(res, 'internal', 'Internal error');
      })
      // A request refused before its body was read: the rest is read and dropped.
      .finally(() => req.readableEnded || req.resume());
    return true;
  };
}

function report(options: EventRouteOptions, res: ServerResponse, label: string): void {
  const { onResponse } = options;
  if (onResponse === undefined) return;
  const started = performance.now();
  res.once('finish', () => onResponse(label, res.statusCode, performance.now() - started));
}

async function serve(
  routes: Routes,
  req: IncomingMessage,
  res: ServerResponse,
  matched: Matched,
): Promise<void> {
  if (matched.route === 'bad') return refuse(res, 'bad_request', matched.message);
  if (req.method !== 'POST')
    return refuse(res, 'method_not_allowed', 'Method not allowed: use POST', { allow: 'POST' });
  const header = headerOf(req);
  const type = header('content-type');
  if (type !== undefined && !/^application\/(?:[\w.+-]*\+)?json\b/i.test(type.trim()))
    return refuse(res, 'unsupported_media_type', 'Unsupported Media Type: send application/json');
  if (matched.route === 'callback') return serveCallback(routes, req, res, matched.token);
  const { authenticator, audit } = routes.options;
  const outcome = await authenticator.authenticate(header);
  if (!outcome.ok) {
    audit?.({
      event: 'auth.denied',
      method: 'POST tasks/{id}/events',
      outcome: outcome.message.slice(0, 100),
    });
    return refuse(res, outcome.status === 401 ? 'unauthorized' : 'forbidden', outcome.message, {
      'www-authenticate': outcome.challenge,
    });
  }
  const owner = { tenant: outcome.auth.tenant, principal: outcome.auth.principal };
  await deliver(routes, req, res, { taskId: matched.taskId, name: matched.name, by: { owner } });
}

/** A callback: the client's rate, then the token (forged and unknown alike 404, expired 410), then the delivery. */
async function serveCallback(
  routes: Routes,
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
): Promise<void> {
  const { options } = routes;
  const client = options.clientAddress?.(req) ?? req.socket.remoteAddress ?? '';
  const wait = routes.buckets.take(client, routes.now());
  if (wait !== undefined)
    return refuse(res, 'too_many_requests', 'Too many callback requests: slow down', {
      'retry-after': String(Math.ceil(wait / 1000)),
    });
  const checked = (options.tokens as CallbackTokens).check(token, routes.now());
  if (!checked.ok) {
    options.audit?.({ event: 'task.event', method: 'POST callbacks', outcome: `token ${checked.reason}` });
    return checked.reason === 'expired'
      ? refuse(res, 'gone', 'This callback URL has expired')
      : refuse(res, 'not_found', 'Not found');
  }
  await deliver(routes, req, res, { taskId: checked.taskId, name: checked.name, by: { callback: true } });
}

/** Reads the payload (bounded), delivers it, and answers; every delivery is an audit line. */
async function deliver(
  routes: Routes,
  req: IncomingMessage,
  res: ServerResponse,
  target: { taskId: string; name: string; by: EventSender },
): Promise<void> {
  const { events, audit } = routes.options;
  let body: string;
  try {
    body = await readBody(req, MAX_EVENT_PAYLOAD_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLargeError) {
      refuse(res, 'too_large', `An event's payload is at most ${MAX_EVENT_PAYLOAD_BYTES} bytes`, {
        connection: 'close',
      });
      res.once('finish', () => req.destroy());
      return;
    }
    throw err;
  }
  let json: string;
  try {
    json = JSON.stringify(JSON.parse(body === '' ? 'null' : body));
  } catch {
    return refuse(res, 'bad_request', 'The body is not JSON: send the event payload as JSON');
  }
  const result = await events.deliver({ ...target, json, check: routes.check }, routes.now());
  const who = 'owner' in target.by ? target.by.owner : {};
  audit?.({
    event: 'task.event',
    ...who,
    taskId: target.taskId.slice(0, 100),
    method: 'callback' in target.by ? 'POST callbacks' : 'POST tasks/{id}/events',
    eventName: target.name,
    outcome: result.ok ? result.outcome : result.reason,
  });
  if (result.ok) return send(res, STATUS.accepted, { ok: true, outcome: result.outcome });
  refuse(res, EVENT_REFUSAL_CODES[result.reason], result.message);
}
