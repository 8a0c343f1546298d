// An operator's bulk change: cancel, retry or purge every task a search matches within the operator's tenants, each
// by the store's own single action (so the rules of one change hold for each), a page at a time and up to a bound;
// its dry run counts them in the store when the store can (TaskAdmin.count), else pages through them.
import type { AuditLog } from '../protocol/audit.js';
import type { AdminScope, AdminTaskFilter, TaskAdmin } from '../tasks/admin.js';
import type { TaskOwner } from '../tasks/task.js';
import { bounded } from './reply.js';
import type { AdminChange } from './routes.js';
import type { BulkJson } from './shapes.js';

/** The most tasks one request counts or changes; past it, the answer says `limited` (run it again for the rest). */
export const BULK_MAX_TASKS = 10_000;
/** The tasks read per search page: each changed in its own transaction before the next page is read. */
const PAGE = 500;

export interface BulkRequest {
  store: TaskAdmin;
  scope: AdminScope;
  who: TaskOwner;
  now: number;
  action: AdminChange;
  filter: AdminTaskFilter;
  dryRun: boolean;
  audit?: AuditLog;
  max?: number;
}

/** The filter of the tasks matching at `now`: those created later (e.g. by a retry) are left out. */
const matchingAt = (request: BulkRequest): AdminTaskFilter => ({
  ...request.filter,
  createdTo: Math.min(request.filter.createdTo ?? Number.MAX_SAFE_INTEGER, request.now + 1),
});

/**
 * The ids of the tasks matching the filter now, newest first, a page at a time, at most `max`. Tasks created after
 * `now` (e.g. those a retry makes) are not part of it; a change to a task does not move it within the order.
 */
async function* matching(request: BulkRequest, max: number): AsyncGenerator<string[]> {
  const { store, scope, now } = request;
  const filter = matchingAt(request);
  let cursor: string | undefined;
  let seen = 0;
  do {
    const limit = Math.min(PAGE, max + 1 - seen);
    const page = await store.list(scope, { ...filter, sort: 'created', order: 'desc', limit, cursor }, now);
    seen += page.items.length;
    yield page.items.map((item) => item.id);
    cursor = page.next;
  } while (cursor !== undefined && seen <= max);
}

/** Counts (dry run) or changes the matching tasks; one audit line per task changed or refused, one for the whole. */
export async function runBulk(request: BulkRequest): Promise<BulkJson> {
  const { store, scope, now, action, who, audit } = request;
  const max = request.max ?? BULK_MAX_TASKS;
  if (request.dryRun && store.count !== undefined) {
    // One count in the store, where paging the search would take up to max / PAGE reads.
    const counted = await store.count(scope, matchingAt(request), max + 1, now);
    return counted > max ? { dryRun: true, matched: max, limited: true } : { dryRun: true, matched: counted };
  }
  let matched = 0;
  let touched = 0;
  let limited = false;
  const skipped: Record<string, number> = {};
  for await (const ids of matching(request, max)) {
    for (const id of ids) {
      if (matched === max) {
        limited = true;
        break;
      }
      matched += 1;
      if (request.dryRun) continue;
      const result = await store[action](scope, id, now);
      audit?.({
        event: `admin.${action}`,
        ...who,
        taskId: bounded(id),
        ...(result.ok && 'taskId' in result ? { retryTaskId: result.taskId } : {}),
        method: `POST bulk/${action}`,
        outcome: result.ok ? 'ok' : result.reason,
      });
      if (result.ok) touched += 1;
      else skipped[result.reason] = (skipped[result.reason] ?? 0) + 1;
    }
  }
  const answer: BulkJson = request.dryRun
    ? { dryRun: true, matched }
    : { matched, touched, ...(Object.keys(skipped).length === 0 ? {} : { skipped }) };
  if (limited) answer.limited = true;
  if (!request.dryRun)
    audit?.({ event: 'admin.bulk', ...who, method: `POST bulk/${action}`, matched, touched, outcome: 'ok' });
  return answer;
}
