// The routes of the operator API under /admin/api/v1: which path and method run which action, and whether the action
// changes anything (then it needs the CSRF token).
export const ADMIN_BASE_PATH = '/admin/api/v1';

export type AdminAction =
  | 'session'
  | 'events'
  | 'list'
  | 'overview'
  | 'health'
  | 'detail'
  | 'pauses'
  | 'flow'
  | AdminChange
  | AdminBulkChange
  | AdminPauseChange
  | 'event';

/** The actions that change one task: audited, and refused without the CSRF token. */
export type AdminChange = 'cancel' | 'retry' | 'purge';

/** The same changes to every task a search matches (`POST /bulk/{cancel|retry|purge}`). */
export type AdminBulkChange = 'bulk-cancel' | 'bulk-retry' | 'bulk-purge';

/** Pausing a tool or a concurrency key (`POST /pauses`), and resuming it (`DELETE /pauses`). */
export type AdminPauseChange = 'pause' | 'resume';

export const isBulkChange = (action: AdminAction): action is AdminBulkChange => action.startsWith('bulk-');

/** Whether the action changes tasks (one, those a search matches, or a pause's): then it needs the CSRF token. */
export const isChange = (
  action: AdminAction,
): action is AdminChange | AdminBulkChange | AdminPauseChange | 'event' =>
  action === 'event' ||
  action === 'cancel' ||
  action === 'retry' ||
  action === 'purge' ||
  action === 'pause' ||
  action === 'resume' ||
  isBulkChange(action);

export type RouteMatch =
  | { kind: 'none' }
  | { kind: 'bad_id' }
  | {
      kind: 'route';
      label: string;
      methods: Readonly<Record<string, AdminAction>>;
      id?: string;
      /** The event a delivery names (`tasks/{id}/events/{name}`). */
      event?: string;
    };

const FIXED: Readonly<Record<string, Readonly<Record<string, AdminAction>>>> = {
  session: { GET: 'session' },
  events: { GET: 'events' },
  tasks: { GET: 'list' },
  overview: { GET: 'overview' },
  health: { GET: 'health' },
  pauses: { GET: 'pauses', POST: 'pause', DELETE: 'resume' },
  flow: { GET: 'flow' },
};

const BULK_ROUTES: Readonly<Record<string, Readonly<Record<string, AdminAction>>>> = {
  cancel: { POST: 'bulk-cancel' },
  retry: { POST: 'bulk-retry' },
  purge: { POST: 'bulk-purge' },
};

const TASK_ROUTES: Readonly<Record<string, Readonly<Record<string, AdminAction>>>> = {
  '': { GET: 'detail', DELETE: 'purge' },
  cancel: { POST: 'cancel' },
  retry: { POST: 'retry' },
};

/** The longest task id accepted in a path (ids the server makes are far shorter). */
const MAX_ID = 256;

/** The route a path names (`none`: not an operator route, answered as any unknown path). */
export function matchRoute(pathname: string): RouteMatch {
  if (!pathname.startsWith(`${ADMIN_BASE_PATH}/`)) return { kind: 'none' };
  const parts = pathname.slice(ADMIN_BASE_PATH.length + 1).split('/');
  const [first, id, sub, ...rest] = parts;
  if (first === undefined) return { kind: 'none' };
  if (parts.length === 1) {
    const methods = FIXED[first];
    return methods === undefined ? { kind: 'none' } : { kind: 'route', label: first, methods };
  }
  if (first === 'bulk' && parts.length === 2) {
    const methods = BULK_ROUTES[id ?? ''];
    return methods === undefined ? { kind: 'none' } : { kind: 'route', label: `bulk/${id ?? ''}`, methods };
  }
  if (first === 'tasks' && sub === 'events' && rest.length === 1) return eventRoute(id, rest[0]);
  if (first !== 'tasks' || id === undefined || id === '' || rest.length > 0) return { kind: 'none' };
  const methods = TASK_ROUTES[sub ?? ''];
  if (methods === undefined || sub === '') return { kind: 'none' };
  let decoded: string;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    return { kind: 'bad_id' };
  }
  if (decoded.length > MAX_ID) return { kind: 'bad_id' };
  return {
    kind: 'route',
    label: sub === undefined ? 'tasks/{id}' : `tasks/{id}/${sub}`,
    methods,
    id: decoded,
  };
}

const EVENT_ROUTE: Readonly<Record<string, AdminAction>> = { POST: 'event' };

/** `tasks/{id}/events/{name}`: an operator's delivery of an event to a task (its name checked by the action). */
function eventRoute(id: string | undefined, name: string | undefined): RouteMatch {
  if (id === undefined || id === '' || name === undefined || name === '') return { kind: 'none' };
  let task: string;
  let event: string;
  try {
    task = decodeURIComponent(id);
    event = decodeURIComponent(name);
  } catch {
    return { kind: 'bad_id' };
  }
  if (task.length > MAX_ID) return { kind: 'bad_id' };
  return { kind: 'route', label: 'tasks/{id}/events/{name}', methods: EVENT_ROUTE, id: task, event };
}
