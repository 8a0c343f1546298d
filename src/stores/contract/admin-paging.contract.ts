// The TaskAdmin contract: keyset pages over 10,000 tasks (many created in the same millisecond) return every task
// exactly once and in order, while new tasks arrive between pages.
import { describe, expect, it } from 'vitest';
import type { AdminTaskQuery, AdminTaskSummary } from '../../tasks/admin.js';
import type { NewTask } from '../../tasks/task.js';
import { adminOf, ALL } from './admin-fixture.contract.js';
import { ALICE, newTask, OTHER_TENANT, T0, type ContractStore } from './harness.contract.js';

const TASKS = 10_000;
const BATCH = 500;

/** Creates tasks in batches, each batch queued together so the store commits it at once. */
async function createMany(h: ContractStore, tasks: readonly NewTask[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < tasks.length; i += BATCH) {
    const created = await Promise.all(tasks.slice(i, i + BATCH).map((t) => h.store.create(t)));
    ids.push(...created.map((t) => t.id));
  }
  return ids;
}

/** Every page of a search, calling `between` after each one. */
async function allPages(
  h: ContractStore,
  query: Omit<AdminTaskQuery, 'cursor'>,
  between: (page: number) => Promise<void>,
): Promise<AdminTaskSummary[][]> {
  const pages: AdminTaskSummary[][] = [];
  let cursor: string | undefined;
  do {
    const page = await adminOf(h).list(ALL, { ...query, cursor }, h.t);
    pages.push(page.items);
    cursor = page.next;
    await between(pages.length);
  } while (cursor !== undefined);
  return pages;
}

export function adminPagingContract(h: ContractStore): void {
  describe('operators: pages', () => {
    it('returns each of 10,000 tasks once, in order, while new ones arrive between pages', async () => {
      // Seven tasks per millisecond: the id breaks the ties.
      const tasks = Array.from({ length: TASKS }, (_, i) =>
        newTask({
          createdAt: T0 + Math.floor(i / 7),
          owner: i % 2 === 0 ? ALICE : OTHER_TENANT,
          ttlMs: null,
        }),
      );
      const ids = await createMany(h, tasks);
      let arrived = 0;
      const arrive = async () => {
        // Newer tasks: newest-first pages never reach them, oldest-first pages find them at the end.
        const extra = [0, 1, 2].map((k) =>
          newTask({ createdAt: T0 + 2_000_000 + arrived * 10 + k, ttlMs: null }),
        );
        await createMany(h, extra);
        arrived += 1;
      };
      for (const order of ['desc', 'asc'] as const) {
        const pages = await allPages(h, { limit: 500, order }, arrive);
        const seen = pages.flat();
        expect(new Set(seen.map((t) => t.id)).size, `${order}: no task twice`).toBe(seen.length);
        const listed = new Set(seen.map((t) => t.id));
        expect(
          ids.filter((id) => !listed.has(id)),
          `${order}: every task`,
        ).toEqual([]);
        const times = seen.map((t) => t.createdAt);
        const sorted = [...times].sort((a, b) => (order === 'desc' ? b - a : a - b));
        expect(times, `${order}: in order`).toEqual(sorted);
        expect(pages.slice(0, -1).every((p) => p.length === 500)).toBe(true);
      }
    }, 120_000);

    it('pages by update time with the same cursor rules', async () => {
      const tasks = Array.from({ length: 1_200 }, (_, i) =>
        newTask({ createdAt: T0 + (i % 5), ttlMs: null }),
      );
      const ids = await createMany(h, tasks);
      const pages = await allPages(h, { limit: 100, sort: 'updated', order: 'asc' }, async () => undefined);
      expect(pages).toHaveLength(12);
      expect(new Set(pages.flat().map((t) => t.id))).toEqual(new Set(ids));
      const times = pages.flat().map((t) => t.updatedAt);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }, 60_000);
  });
}
