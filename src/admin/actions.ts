// What each operator route does once the caller is known to be an operator (and, for a change, sent its CSRF token):
// within the operator's tenants, a task elsewhere looks absent.
import type { ServerResponse } from 'node:http';
import type { AuditLog } from '../protocol/audit.js';
import {
  AdminQueryError,
  type AdminActionResult,
  type AdminRetryResult,
  type AdminScope,
  type TaskAdmin,
} from '../tasks/admin.js';
import { StoreUnavailableError } from '../tasks/errors.js';
import type { OutOfScopeTasks } from '../tasks/store.js';
import type { AdminHealthComponent, AdminRecordedStep, AdminTaskUpstreamView } from '../tasks/admin.js';
import type { TaskOwner } from '../tasks/task.js';
import type { TaskInspection } from '../tasks/inspection.js';
import { runBulk } from './bulk.js';
import { changePause, flowView, listPauses } from './pause-actions.js';
import type { PauseTarget } from '../tasks/pauses.js';
import { parseBulkQuery, parseOverviewQuery, parseTaskQuery } from './query.js';
import { bounded, sendError, sendJson } from './reply.js';
import { isBulkChange, type AdminAction, type AdminBulkChange, type AdminChange } from './routes.js';
import type {
  BulkJson,
  DoneJson,
  RetriedJson,
  SessionJson,
  TaskDetailJson,
  TaskPageJson,
  TaskUpstreamJson,
} from './shapes.js';
import { detailView, healthView, overviewView, summaryView } from './views.js';

export interface ActionContext {
  store: TaskAdmin;
  res: ServerResponse;
  /** The operator's own identity. */
  who: TaskOwner;
  scope: AdminScope;
  now: number;
  params: URLSearchParams;
  /** The task a path names. */
  id: string | undefined;
  audit: AuditLog | undefined;
  csrfToken: () => string;
  /** The detail shows payloads (AdminApiOptions.payloads). */
  payloads: boolean;
  /** AdminApiOptions.waitingForCode. */
  waitingForCode?: () => readonly OutOfScopeTasks[] | undefined;
  /** AdminApiOptions.health. */
  health?: () => readonly AdminHealthComponent[];
  /** AdminApiOptions.taskUpstream. */
  taskUpstream?: AdminTaskUpstreamView;
  /** A retry's recorded step (the request's body, checked). */
  record?: AdminRecordedStep;
  /** What a pause or resume names (its body or query, checked). */
  pause?: PauseTarget;
}

/** Every action but the event stream (a response of its own, event-stream.ts) and an event's delivery (api.ts). */
export type QueryOrChange = Exclude<AdminAction, 'events' | 'event'>;

const NOT_FOUND = 'Task not found';

/** What a 409 says for each refusal of a change. */
const CONFLICT_MESSAGES = {
  terminal: 'The task has already finished',
  not_failed: 'Only a task that failed or ended in a tool error can be retried',
  not_terminal: 'Only a finished task can be purged',
  sealed: 'The task’s payloads are sealed with a key this server does not hold: they cannot be copied',
  step_kept: 'The task retried already finished that step: its value is kept, there is nothing to record',
} as const;

/** Runs one action; a refused query is a 400, a store that does not answer a 503. */
export async function serveAction(context: ActionContext, action: QueryOrChange): Promise<void> {
  try {
    await run(context, action);
  } catch (err) {
    if (err instanceof AdminQueryError) sendError(context.res, 'bad_request', err.message);
    else if (err instanceof StoreUnavailableError)
      sendError(context.res, 'unavailable', 'Task store unavailable; retry', { 'retry-after': '1' });
    else throw err;
  }
}

async function run(context: ActionContext, action: QueryOrChange): Promise<void> {
  const { res, scope } = context;
  switch (action) {
    case 'session':
      sendJson(res, 200, {
        ...context.who,
        operator: { tenants: scope.tenants === 'all' ? 'all' : [...scope.tenants] },
        csrfToken: context.csrfToken(),
      } satisfies SessionJson);
      return;
    case 'list':
      return list(context);
    case 'overview':
      return overview(context);
    case 'detail':
      return detail(context);
    case 'health':
      sendJson(res, 200, healthView(context.health?.() ?? []));
      return;
    case 'pauses':
      return listPauses(context);
    case 'flow':
      return flowView(context);
    case 'pause':
    case 'resume':
      return context.pause === undefined ? undefined : changePause(context, action, context.pause);
    default:
      return isBulkChange(action) ? bulk(context, action) : change(context, action);
  }
}

/** A task's detail; with payloads on, its payloads too, each read an audit line (it reveals what users sent). */
async function detail(context: ActionContext): Promise<void> {
  const { store, res, scope, now } = context;
  const id = context.id ?? '';
  const task = await store.detail(scope, id, now);
  if (task === undefined) {
    sendError(res, 'not_found', NOT_FOUND);
    return;
  }
  const view = { ...detailView(task), upstream: await upstreamOf(context, task) } satisfies TaskDetailJson;
  if (!context.payloads || store.payloads === undefined) {
    sendJson(res, 200, view);
    return;
  }
  const payloads = await store.payloads(scope, id, now);
  context.audit?.({
    event: 'admin.payloads',
    ...context.who,
    taskId: bounded(id),
    outcome: payloads === undefined ? 'not_found' : 'ok',
  });
  if (payloads === undefined) sendError(res, 'not_found', NOT_FOUND);
  else sendJson(res, 200, { ...view, ...payloads } satisfies TaskDetailJson);
}

/** A gateway task's upstream call, derived from its steps (their values read here, never sent). */
async function upstreamOf(
  context: ActionContext,
  task: TaskInspection,
): Promise<TaskUpstreamJson | undefined> {
  const { store, taskUpstream, scope, now } = context;
  if (taskUpstream === undefined) return undefined;
  const step = (name: string) =>
    store.stepValue === undefined ? Promise.resolve(undefined) : store.stepValue(scope, task.id, name, now);
  return (await taskUpstream(task, step)) satisfies TaskUpstreamJson | undefined;
}

async function list(context: ActionContext): Promise<void> {
  const query = parseTaskQuery(context.params);
  if (!query.ok) {
    sendError(context.res, 'bad_request', query.reason);
    return;
  }
  const page = await context.store.list(context.scope, query.value, context.now);
  sendJson(context.res, 200, { items: page.items.map(summaryView), next: page.next } satisfies TaskPageJson);
}

async function overview(context: ActionContext): Promise<void> {
  const query = parseOverviewQuery(context.params);
  if (!query.ok) {
    sendError(context.res, 'bad_request', query.reason);
    return;
  }
  const counts = await context.store.overview(context.scope, context.now, query.value);
  // Counted over every tenant: shown only to operators of all of them.
  const waiting = context.scope.tenants === 'all' ? context.waitingForCode?.() : undefined;
  sendJson(context.res, 200, overviewView(counts, waiting));
}

/**
 * Cancel, retry or purge: one audit line with the outcome, then 200, 404 or 409. A retry answers the new task's id,
 * and its audit line names both tasks (`taskId` the one retried, `retryTaskId` the new one).
 */
async function change(context: ActionContext, action: AdminChange): Promise<void> {
  const { store, res, scope, now, who } = context;
  const id = context.id ?? '';
  let result: AdminActionResult | AdminRetryResult;
  try {
    result =
      action === 'retry' && context.record !== undefined
        ? await store.retry(scope, id, now, { record: context.record })
        : await store[action](scope, id, now);
  } catch (err) {
    context.audit?.({ event: `admin.${action}`, ...who, taskId: bounded(id), outcome: 'error' });
    throw err;
  }
  const made = result.ok && 'taskId' in result ? String(result.taskId) : undefined;
  context.audit?.({
    event: `admin.${action}`,
    ...who,
    taskId: bounded(id),
    ...(made === undefined ? {} : { retryTaskId: made }),
    ...(context.record === undefined ? {} : { recordedStep: bounded(context.record.step) }),
    outcome: result.ok ? 'ok' : result.reason,
  });
  if (made !== undefined) sendJson(res, 200, { ok: true, taskId: made } satisfies RetriedJson);
  else if (result.ok) sendJson(res, 200, { ok: true } satisfies DoneJson);
  else if (result.reason === 'not_found') sendError(res, 'not_found', NOT_FOUND);
  else sendError(res, result.reason, CONFLICT_MESSAGES[result.reason]);
}

/** A bulk change (bulk.ts): 200 with the counts, or 400 for a filter refused. */
async function bulk(context: ActionContext, action: AdminBulkChange): Promise<void> {
  const query = parseBulkQuery(context.params);
  if (!query.ok) {
    sendError(context.res, 'bad_request', query.reason);
    return;
  }
  const { store, scope, who, now, audit } = context;
  const change = action.slice('bulk-'.length) as AdminChange;
  const answer = await runBulk({ store, scope, who, now, audit, action: change, ...query.value });
  sendJson(context.res, 200, answer satisfies BulkJson);
}
