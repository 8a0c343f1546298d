// The operators' port on SQLite: searches and counts within a tenant scope; a cancel done as the owner's own; retry
// and purge, each one write transaction whose change the change log announces (to workers, subscribers and the
// terminal caches of every process on the file).
import type { AdminActionResult, AdminRetryResult, AdminScope, TaskAdmin } from '../../tasks/admin.js';
import type { TaskStore } from '../../tasks/store.js';
import { isTerminal } from '../../tasks/task.js';
import { type TaskInspection } from '../../tasks/inspection.js';
import {
  adminOverview,
  adminPage,
  cancelOutcome,
  checkAdminFilter,
  checkAdminQuery,
  emptyAdminWindow,
  inAdminScope,
  toAdminSummary,
  visibleTenants,
} from '../admin-query.js';
import { openStepValue, toAdminPayloads } from '../admin-payloads.js';
import { planRetry } from '../retry-fork.js';
import type { StoreContext } from './context.js';
import { guarded } from './guarded.js';
import { prepareAdminQueries, type AdminQueries } from './sql/admin.js';
import type { Opener } from '../payload-sealing.js';

const NOT_FOUND = { ok: false, reason: 'not_found' } as const;

export interface SqliteAdminDeps {
  /** The owner's cancel: an operator's cancel takes the same path, on the task's owner. */
  requestCancel: TaskStore['requestCancel'];
  inspect: (id: string, now: number) => Promise<TaskInspection | undefined>;
}

/** The task's owner and status, when the task exists within the scope. */
function scopedOwner(aq: AdminQueries, scope: AdminScope, id: string) {
  const row = aq.ownerOf(id);
  return row !== undefined && inAdminScope(scope, row.tenant) ? row : undefined;
}

/** Searches within the scope: a page (TaskAdmin.list), and a count of the matches up to a bound (one statement). */
function searches(aq: AdminQueries, open: Opener): Pick<TaskAdmin, 'list' | 'count'> {
  return {
    async list(scope, query) {
      const q = checkAdminQuery(query);
      const rows = guarded(() => aq.search(visibleTenants(scope, q.filter.tenant), q));
      return adminPage(rows, q, (row) => toAdminSummary(row, open));
    },
    async count(scope, filter, max) {
      checkAdminFilter(filter);
      return guarded(() => aq.count(visibleTenants(scope, filter.tenant), filter, max));
    },
  };
}

export function sqliteAdmin(ctx: StoreContext, deps: SqliteAdminDeps): TaskAdmin {
  const { db, codec, log, writes } = ctx;
  const aq = prepareAdminQueries(db);
  const scoped = (scope: AdminScope, id: string) => scopedOwner(aq, scope, id);
  return {
    ...searches(aq, codec.open),

    async detail(scope, id, now) {
      const found = await deps.inspect(id, now);
      if (found === undefined || !inAdminScope(scope, found.owner.tenant)) return undefined;
      if (found.status !== 'input_required') return found;
      return { ...found, pendingInputs: guarded(() => aq.pendingInputs(id)) };
    },

    async payloads(scope, id) {
      const row = guarded(() => aq.payloads(id));
      return row !== undefined && inAdminScope(scope, row.tenant)
        ? toAdminPayloads(row, codec.open)
        : undefined;
    },

    async stepValue(scope, id, name) {
      const row = guarded(() => aq.stepValue(id, name));
      return row !== undefined && inAdminScope(scope, row.tenant)
        ? openStepValue(id, name, row.value, codec.open)
        : undefined;
    },

    async cancel(scope, id, now) {
      const row = guarded(() => scoped(scope, id));
      if (row === undefined) return NOT_FOUND;
      return cancelOutcome(await deps.requestCancel(id, row, now));
    },

    async retry(scope, id, now, options) {
      return writes.tx((): AdminRetryResult => {
        const source = aq.forkSource(id);
        if (source === undefined || !inAdminScope(scope, source.owner.tenant)) return NOT_FOUND;
        const record = options?.record === undefined ? undefined : { ...options.record, at: now };
        const plan = planRetry(source, source, codec, record);
        if (!plan.ok) return plan;
        const { fork } = plan;
        aq.insertFork(id, source.owner, fork, now);
        log.changed({ taskId: fork.id, runnable: true, cancelRequested: false });
        return { ok: true, taskId: fork.id };
      });
    },

    async purge(scope, id) {
      return writes.tx((): AdminActionResult => {
        const row = scoped(scope, id);
        if (row === undefined) return NOT_FOUND;
        if (!isTerminal(row.status) || !aq.purge(id)) return { ok: false, reason: 'not_terminal' };
        // Subscribers read it and find it gone; other processes' terminal caches let go of it.
        log.changed({ taskId: id, runnable: false, cancelRequested: false });
        return { ok: true };
      });
    },

    async overview(scope, now, { windowsMs, stuckMs }) {
      const tenants = visibleTenants(scope);
      if (tenants?.length === 0) return adminOverview([], windowsMs.map(emptyAdminWindow), 0);
      return guarded(() =>
        adminOverview(
          aq.toolCounts(tenants),
          windowsMs.map((w) => aq.window(tenants, w, now)),
          aq.stuck(tenants, now - stuckMs),
        ),
      );
    },
  };
}
