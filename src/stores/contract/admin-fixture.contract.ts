// What the TaskAdmin contract's topics share: the operators' port of the store under test, and a small set of tasks
// of three owners in two tenants, two tools and every status.
import { expect } from 'vitest';
import type { AdminScope, AdminTaskQuery, TaskAdmin } from '../../tasks/admin.js';
import type { NewTask, RunOutcome } from '../../tasks/task.js';
import { ALICE, BOB, must, newTask, OTHER_TENANT, T0, type ContractStore } from './harness.contract.js';

export const ALL: AdminScope = { tenants: 'all' };
export const ACME: AdminScope = { tenants: ['acme'] };

/** The store's operators' port (the suite is only run for stores that have one). */
export const adminOf = (h: ContractStore): TaskAdmin => must(h.store.admin, 'admin port');

/** Creates a task at `createdAt` and, given an outcome, runs it there `+100` ms later (nothing else may be runnable). */
export async function seed(
  h: ContractStore,
  overrides: Partial<NewTask> & { createdAt: number },
  outcome?: RunOutcome,
): Promise<string> {
  const task = await h.store.create(newTask(overrides));
  if (outcome === undefined) return task.id;
  const at = overrides.createdAt + 100;
  const claimed = must(await h.store.claim('w1', 1_000, at), 'claimed task');
  expect(claimed.id).toBe(task.id);
  expect(await h.store.finish(task.id, claimed.token, outcome, at)).toBe(true);
  return task.id;
}

export const failed = (message: string): RunOutcome => ({
  kind: 'failed',
  error: { code: -32603, message, data: { secret: 'never listed' } },
  statusMessage: 'It broke.',
});

/** Seven tasks, t1…t7, created at T0+1…T0+7; the finished and suspended ones last changed 100 ms after creation. */
export async function seedFixture(h: ContractStore): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  const result = { content: [], isError: false };
  ids.t1 = await seed(h, { createdAt: T0 + 1, toolVersion: 'v1' }, { kind: 'completed', result });
  ids.t2 = await seed(h, { createdAt: T0 + 2, owner: BOB, toolVersion: 'v2' }, failed('Disk FULL on node 7'));
  ids.t3 = await seed(
    h,
    { createdAt: T0 + 3, owner: OTHER_TENANT, tool: 'report', toolVersion: 'v1' },
    failed('Upstream timeout'),
  );
  ids.t4 = await seed(h, { createdAt: T0 + 4, tool: 'report' }, { kind: 'cancelled' });
  const asking = { kind: 'input_required', requests: { k: { method: 'elicitation/create' } } } as const;
  ids.t7 = await seed(h, { createdAt: T0 + 7, owner: ALICE, toolVersion: 'v1' }, asking);
  ids.t5 = await seed(h, { createdAt: T0 + 5, owner: BOB, tool: 'report', toolVersion: 'v1' });
  ids.t6 = await seed(h, { createdAt: T0 + 6, owner: OTHER_TENANT, toolVersion: 'v1' });
  return ids;
}

/** The fixture's names of the tasks a search returns, in its order. */
export async function listed(
  h: ContractStore,
  ids: Record<string, string>,
  scope: AdminScope,
  query: Partial<AdminTaskQuery> = {},
): Promise<string[]> {
  const names = new Map(Object.entries(ids).map(([name, id]) => [id, name]));
  const page = await adminOf(h).list(scope, { limit: 100, ...query }, h.t);
  expect(page.next).toBeUndefined();
  return page.items.map((item) => names.get(item.id) ?? item.id);
}
