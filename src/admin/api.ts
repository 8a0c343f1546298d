// The operator API (JSON under /admin/api/v1, and its event stream), a route of the HTTP edge: the same credentials as
// /mcp, the operator role and its tenants, a CSRF token on every change, an audit line for every change and every
// refusal. The dashboard's files (/admin) are served beside it, and only with it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Authenticator } from '../auth/authenticator.js';
import type { AuditLog } from '../protocol/audit.js';
import type {
  AdminHealthComponent,
  AdminRecordedStep,
  AdminScope,
  AdminTaskUpstreamView,
  TaskAdmin,
} from '../tasks/admin.js';
import type { ChangeFeed, OutOfScopeTasks } from '../tasks/store.js';
import { createOpenLimit, type OpenLimit } from '../tasks/open-limit.js';
import { ownerKey, type TaskOwner } from '../tasks/task.js';
import type { HeaderLookup } from '../wire/headers.js';
import { serveAction, type ActionContext } from './actions.js';
import { createAssetRoute, type AssetRoute } from './assets.js';
import { createCsrfTokens, type CsrfTokens } from './csrf.js';
import { DEFAULT_EVENT_STREAM, openEventStream, type EventStreamOptions } from './event-stream.js';
import { createTaskEventHub, type TaskEventHub } from './events.js';
import { bounded, sendError, sendJson } from './reply.js';
import {
  EVENT_REFUSAL_CODES,
  eventNameProblem,
  MAX_EVENT_PAYLOAD_BYTES,
  type OutsideEventPort,
} from '../tasks/events.js';
import { readJsonBody, readRetryBody } from './retry-body.js';
import { readPauseRequest } from './pause-request.js';
import type { PauseTarget } from '../tasks/pauses.js';
import { isChange, matchRoute, type AdminAction } from './routes.js';

/** The operator API of a server: its store's operators' port, and the secret CSRF tokens are derived from. */
export interface AdminApiOptions {
  /** The store's `admin` port. */
  store: TaskAdmin;
  /**
   * The secret CSRF tokens are derived from; every replica must have the same one: the backend's `stateSecret` (the
   * one stored in the backend, or DURABLE_MCP_STATE_SECRET).
   */
  secret: string | Buffer;
  /** Time in ms since the epoch (default Date.now). */
  now?: () => number;
  /**
   * The store's change feed: `GET /admin/api/v1/events` streams task changes from it (the dashboard's live updates).
   * Without one, that route is 404 and the dashboard reloads by hand.
   */
  changes?: ChangeFeed;
  /**
   * The event streams: keep-alive interval and lifetime (default 15 s and 10 min), what a client may leave unread
   * before its stream is ended (default 256 KiB), and how many may be open at once per operator credential (default
   * 4) and in all (default 32); more are refused with 429.
   */
  eventStream?: {
    keepAliveMs?: number;
    maxStreamMs?: number;
    maxBufferedBytes?: number;
    maxPerOperator?: number;
    maxTotal?: number;
  };
  /** Told when an event stream opens (1) and ends (-1): the open streams gauge. */
  onStream?: (delta: 1 | -1) => void;
  /**
   * A task's detail also shows its payloads (arguments, input requests and answers, result), opened with the store's
   * cipher; each such read is an `admin.payloads` audit line. Default false: the detail never shows a payload.
   */
  payloads?: boolean;
  /**
   * The tasks this process's worker last found waiting for a process that runs their tool version (all tenants):
   * the overview shows them to operators of every tenant as `waitingForCode`. Each replica counts against its own
   * code, so a count that every replica reports (the least of `durable_mcp_tasks_waiting_for_code` over them) is
   * what no running process can replay.
   */
  waitingForCode?: () => readonly OutOfScopeTasks[] | undefined;
  /**
   * The parts of the server's health it reports to operators (`GET /admin/api/v1/health`, the dashboard's overview),
   * e.g. a gateway's upstream; without it, none. Never part of `/readyz`.
   */
  health?: () => readonly AdminHealthComponent[];
  /**
   * What a server that forwards calls (the gateway) says of a task's upstream call: a task's detail shows it as
   * `upstream` (its step values are read only to derive it, never shown).
   */
  taskUpstream?: AdminTaskUpstreamView;
  /**
   * The store's events port, its deliveries checked against their waits' schemas (`checkedEvents` of the event
   * routes): `POST /admin/api/v1/tasks/{id}/events/{name}` delivers an event to any task within the operator's
   * tenants. Without it, that route is 404.
   */
  events?: OutsideEventPort;
}

/** What the operator API takes from the edge it is served by. */
export interface AdminRouteOptions extends AdminApiOptions {
  authenticator: Authenticator;
  audit?: AuditLog;
  /** Told of an error no action caught (the request got a 500). */
  onError?: (err: unknown) => void;
  /** Told of each response: `admin <METHOD> <route>`, the HTTP status and the duration (as the edge's requests). */
  onResponse?: (method: string, status: number, durationMs: number) => void;
}

/** A route of the edge: true when it answered the request, false for a path that is not the operator API's. */
export type AdminRoute = (req: IncomingMessage, res: ServerResponse) => boolean;

interface Api {
  readonly options: AdminRouteOptions;
  readonly csrf: CsrfTokens;
  readonly now: () => number;
  readonly events: TaskEventHub | undefined;
  readonly eventStream: EventStreamOptions;
  /** Open event streams, per operator credential and in all. */
  readonly streams: OpenLimit;
  readonly assets: AssetRoute;
}

export function createAdminRoute(options: AdminRouteOptions): AdminRoute {
  const now = options.now ?? Date.now;
  const { changes, onError } = options;
  const api: Api = {
    options,
    csrf: createCsrfTokens(options.secret),
    now,
    events:
      changes === undefined ? undefined : createTaskEventHub({ changes, store: options.store, now, onError }),
    eventStream: { ...DEFAULT_EVENT_STREAM, ...options.eventStream },
    streams: createOpenLimit(
      options.eventStream?.maxPerOperator ?? DEFAULT_STREAMS_PER_OPERATOR,
      options.eventStream?.maxTotal ?? DEFAULT_STREAMS_TOTAL,
    ),
    assets: createAssetRoute(undefined, onError),
  };
  return (req, res) => {
    if (api.assets(req, res)) {
      report(options, res, `admin ${req.method ?? ''} ui`);
      return true;
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const route = matchRoute(q === -1 ? url : url.slice(0, q));
    if (route.kind === 'none') return false;
    // Only a retry and a pause take a body (read within a bound after the credentials are checked); any other body
    // is read and dropped, never buffered.
    const bodied = route.kind === 'route' ? route.methods[req.method ?? ''] : undefined;
    if (bodied !== 'retry' && bodied !== 'pause' && bodied !== 'event') req.resume();
    report(options, res, `admin ${req.method ?? ''} ${route.kind === 'route' ? route.label : 'tasks/{id}'}`);
    if (route.kind === 'bad_id') {
      sendError(res, 'bad_request', 'Malformed task id');
      return true;
    }
    const action = route.methods[req.method ?? ''];
    if (action === 'event' && options.events === undefined) {
      sendError(res, 'not_found', 'Not found');
      return true;
    }
    if (action === 'events' && api.events === undefined) {
      sendError(res, 'not_found', 'No change feed: live events are not available');
      return true;
    }
    if (action === undefined) {
      const allow = Object.keys(route.methods).join(', ');
      sendError(res, 'method_not_allowed', `Method not allowed: use ${allow}`, { allow });
      return true;
    }
    const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const label = `${req.method ?? ''} ${route.label}`;
    serve(api, req, res, { action, label, params, id: route.id, event: route.event })
      .catch((err: unknown) => {
        options.onError?.(err);
        sendError(res, 'internal', 'Internal error');
      })
      // A retry refused before its body was read: the rest is read and dropped.
      .finally(() => req.readableEnded || req.resume());
    return true;
  };
}

/** An operator's event stream, within the caps; or why it was refused (429 sent). */
function openStream(
  api: Api,
  hub: TaskEventHub,
  who: TaskOwner,
  scope: AdminScope,
  res: ServerResponse,
): string | undefined {
  const held = api.streams.open(ownerKey(who));
  if (!held.ok) {
    sendError(res, 'too_many_requests', tooManyStreams(held.cap, held.limit), { 'retry-after': '5' });
    return held.cap === 'owner' ? "the operator's event streams at their cap" : 'event streams at their cap';
  }
  const { onStream } = api.options;
  onStream?.(1);
  openEventStream(hub, scope, res, api.eventStream, () => {
    held.release();
    onStream?.(-1);
  });
  return undefined;
}

const DEFAULT_STREAMS_PER_OPERATOR = 4;
const DEFAULT_STREAMS_TOTAL = 32;

const tooManyStreams = (cap: 'owner' | 'total', limit: number): string =>
  cap === 'owner'
    ? `Too many open event streams for this operator (limit ${limit}): close one first`
    : `Too many open event streams on this server (limit ${limit}): try again later`;

/** Reports the response once it has gone out. */
function report(options: AdminRouteOptions, res: ServerResponse, label: string): void {
  const { onResponse } = options;
  if (onResponse === undefined) return;
  const started = performance.now();
  res.once('finish', () => onResponse(label, res.statusCode, performance.now() - started));
}

interface Request {
  action: AdminAction;
  label: string;
  params: URLSearchParams;
  id: string | undefined;
  /** The event a delivery names. */
  event?: string;
}

const headerOf =
  (req: IncomingMessage): HeaderLookup =>
  (name) => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  };

/** Credentials, the operator role, the CSRF token of a change; then the action. */
async function serve(api: Api, req: IncomingMessage, res: ServerResponse, request: Request): Promise<void> {
  const { authenticator, audit } = api.options;
  const header = headerOf(req);
  const outcome = await authenticator.authenticate(header);
  if (!outcome.ok) {
    audit?.({ event: 'auth.denied', method: request.label, outcome: bounded(outcome.message) });
    sendError(res, outcome.status === 401 ? 'unauthorized' : 'forbidden', outcome.message, {
      'www-authenticate': outcome.challenge,
    });
    return;
  }
  const who: TaskOwner = { tenant: outcome.auth.tenant, principal: outcome.auth.principal };
  const refused = (reason: string): void =>
    audit?.({
      event: 'admin.denied',
      ...who,
      method: request.label,
      ...(request.id === undefined ? {} : { taskId: bounded(request.id) }),
      outcome: reason,
    });
  if (outcome.operator === undefined) {
    refused('not an operator');
    sendError(res, 'forbidden', 'Operator role required');
    return;
  }
  if (isChange(request.action) && !api.csrf.check(who, header('x-csrf-token'))) {
    refused('csrf');
    sendError(res, 'csrf', 'Missing or invalid X-CSRF-Token');
    return;
  }
  const scope: AdminScope = outcome.operator;
  let record: AdminRecordedStep | undefined;
  if (request.action === 'retry') {
    const body = await readRetryBody(req);
    if (!body.ok) {
      refused(body.status);
      sendError(res, body.status, body.message);
      return;
    }
    record = body.record;
  }
  let pause: PauseTarget | undefined;
  if (request.action === 'pause' || request.action === 'resume') {
    const named = await readPauseRequest(req, request.action, request.params);
    if (!named.ok) {
      refused(named.status);
      sendError(res, named.status, named.message);
      return;
    }
    pause = named.target;
  }
  if (request.action === 'event') return deliverEvent(api, req, res, request, { who, scope, refused });
  if (request.action === 'events') {
    if (api.events === undefined) return;
    const opened = openStream(api, api.events, who, scope, res);
    if (opened !== undefined) refused(opened);
    return;
  }
  const context: ActionContext = {
    store: api.options.store,
    res,
    who,
    scope,
    now: api.now(),
    params: request.params,
    id: request.id,
    audit,
    csrfToken: () => api.csrf.issue(who),
    payloads: api.options.payloads === true,
    waitingForCode: api.options.waitingForCode,
    health: api.options.health,
    taskUpstream: api.options.taskUpstream,
    record,
    pause,
  };
  await serveAction(context, request.action);
}

/**
 * `POST tasks/{id}/events/{name}`: the body (the payload, bounded) delivered to a task within the operator's tenants
 * (elsewhere: 404), an `admin.event` audit line for each delivery; a request refused before it is `refused` (audited).
 */
async function deliverEvent(
  api: Api,
  req: IncomingMessage,
  res: ServerResponse,
  request: Request,
  { who, scope, refused }: { who: TaskOwner; scope: AdminScope; refused: (reason: string) => void },
): Promise<void> {
  const events = api.options.events as OutsideEventPort;
  const name = request.event ?? '';
  const problem = eventNameProblem(name);
  if (problem !== undefined) {
    sendError(res, 'bad_request', `Bad event name: ${problem}`);
    return refused('bad event name');
  }
  const read = await readJsonBody(req, MAX_EVENT_PAYLOAD_BYTES);
  if (!read.ok) {
    sendError(res, read.status, read.message);
    return refused(read.status);
  }
  const taskId = request.id ?? '';
  const json = JSON.stringify(read.body ?? null);
  const result = await events.deliver({ taskId, name, json, by: { operator: scope } }, api.now());
  api.options.audit?.({
    event: 'admin.event',
    ...who,
    taskId: bounded(taskId),
    eventName: name,
    outcome: result.ok ? result.outcome : result.reason,
  });
  if (result.ok) sendJson(res, 202, { ok: true, outcome: result.outcome });
  else sendError(res, EVENT_REFUSAL_CODES[result.reason], result.message);
}
