// The operator routes of pauses: list them (`GET /pauses`), pause (`POST`) and resume (`DELETE`) a tool or a
// concurrency key within the operator's tenants, and the flow view (`GET /flow`): keys at their limit and pauses.
import type { ServerResponse } from 'node:http';
import type { AuditLog } from '../protocol/audit.js';
import type { AdminScope, TaskAdmin } from '../tasks/admin.js';
import type { AdminPause, PauseTarget } from '../tasks/pauses.js';
import type { TaskOwner } from '../tasks/task.js';
import { bounded, sendError, sendJson } from './reply.js';
import type { FlowJson, PauseJson, PausedJson, PausesJson, ResumedJson } from './shapes.js';

/** What these routes take of an action's context (actions.ts, ActionContext). */
interface PauseContext {
  store: TaskAdmin;
  res: ServerResponse;
  who: TaskOwner;
  scope: AdminScope;
  now: number;
  params: URLSearchParams;
  audit: AuditLog | undefined;
}

/** The most keys the flow view lists by default, and at most. */
export const FLOW_KEYS_DEFAULT = 50;
export const FLOW_KEYS_MAX = 500;

const NO_PAUSES = 'This server’s task store cannot pause tools or keys';

const pauseView = (p: AdminPause): PauseJson => ({
  kind: p.kind,
  name: p.name,
  ...(p.tenant === undefined ? {} : { tenant: p.tenant }),
  pausedAt: new Date(p.pausedAt).toISOString(),
  pausedTasks: p.pausedTasks,
});

/** `GET /pauses`. */
export async function listPauses(context: PauseContext): Promise<void> {
  const { store, scope, res } = context;
  if (store.pauses === undefined) return sendError(res, 'not_found', NO_PAUSES);
  const items = (await store.pauses(scope)).map(pauseView);
  sendJson(res, 200, { items } satisfies PausesJson);
}

/** `GET /flow?max=N`: keys with parked tasks (at most N) and the pauses in force. */
export async function flowView(context: PauseContext): Promise<void> {
  const { store, scope, res, now, params } = context;
  if (store.flow === undefined || store.pauses === undefined) return sendError(res, 'not_found', NO_PAUSES);
  const text = params.get('max') ?? String(FLOW_KEYS_DEFAULT);
  const max = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
  if (!(max >= 1 && max <= FLOW_KEYS_MAX))
    return sendError(res, 'bad_request', `max must be a whole number from 1 to ${FLOW_KEYS_MAX}`);
  const keys = await store.flow(scope, now, max + 1);
  const pauses = (await store.pauses(scope)).map(pauseView);
  const answer: FlowJson = { keys: keys.slice(0, max), pauses };
  if (keys.length > max) answer.limited = true;
  sendJson(res, 200, answer);
}

const audited = (target: PauseTarget) => ({
  kind: target.kind,
  name: bounded(target.name),
  ...(target.tenant === undefined ? {} : { tenant: bounded(target.tenant) }),
});

/** `POST /pauses` (`pause`) and `DELETE /pauses` (`resume`) of `target`: one audit line with the outcome. */
export async function changePause(
  context: PauseContext,
  action: 'pause' | 'resume',
  target: PauseTarget,
): Promise<void> {
  const { store, scope, res, now, who } = context;
  const audit = (outcome: string, resumed?: number): void =>
    context.audit?.({
      event: `admin.${action}`,
      ...who,
      pause: audited(target),
      ...(resumed === undefined ? {} : { resumed }),
      outcome,
    });
  if (store.pause === undefined || store.resume === undefined) {
    audit('not_supported');
    return sendError(res, 'not_found', NO_PAUSES);
  }
  if (action === 'pause') {
    const result = await store.pause(scope, target, now);
    audit(result.ok ? 'ok' : result.reason);
    if (result.ok) return sendJson(res, result.created ? 201 : 200, result satisfies PausedJson);
    return result.reason === 'forbidden'
      ? sendError(res, 'forbidden', 'Outside your tenants: name one of them as the pause’s tenant')
      : sendError(res, 'conflict', 'Too many pauses in force: resume some first');
  }
  const result = await store.resume(scope, target, now);
  audit(result.ok ? 'ok' : result.reason, result.ok ? result.resumed : undefined);
  if (result.ok) sendJson(res, 200, result satisfies ResumedJson);
  else sendError(res, 'not_found', 'No such pause in force within your tenants');
}
