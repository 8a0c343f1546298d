// The TaskAdmin contract: how each task ended (its outcome: a tool error apart from a clean completion), found by the
// search, shown in rows and details, and counted by the overview; the MCP status stays what it was.
import { describe, expect, it } from 'vitest';
import { AdminQueryError } from '../../tasks/admin.js';
import type { RunOutcome, TaskFailure } from '../../tasks/task.js';
import { adminOf, ALL, failed, listed, seed } from './admin-fixture.contract.js';
import { ALICE, must, newTask, OTHER_TENANT, T0, type ContractStore } from './harness.contract.js';

const text = (t: string) => ({ content: [{ type: 'text', text: t }], isError: true });
const thrown: TaskFailure = { ref: 'err_1', name: 'TypeError', message: 'Cannot read quota', at: T0 };
/** A tool error as a handler returns it, and as a thrown error becomes one (private: the text says little). */
const returned: RunOutcome = { kind: 'completed', result: text('Billing API said NO') };
const threw: RunOutcome = {
  kind: 'completed',
  result: text('The tool failed. Error reference: err_1'),
  statusMessage: 'The tool failed (error reference err_1).',
  failure: thrown,
};
const clean: RunOutcome = { kind: 'completed', result: { content: [], isError: false } };

/** A task of every ending, t1…t9 created at T0+1…T0+9 (each ended 100 ms after), and two unfinished ones. */
async function seedEndings(h: ContractStore): Promise<Record<string, string>> {
  const ids: Record<string, string> = {};
  ids.clean = await seed(h, { createdAt: T0 + 1 }, clean);
  ids.returned = await seed(h, { createdAt: T0 + 2, tool: 'report' }, returned);
  ids.threw = await seed(h, { createdAt: T0 + 3, owner: OTHER_TENANT }, threw);
  ids.failed = await seed(h, { createdAt: T0 + 4 }, failed('Disk full'));
  ids.cancelled = await seed(h, { createdAt: T0 + 5 }, { kind: 'cancelled' });
  // A run's wait and suspension that find a cancel requested meanwhile end the task cancelled.
  for (const [name, ending] of [
    ['waitCancelled', { kind: 'waiting', until: T0 + 60_000, statusMessage: 'Later.' }],
    ['askCancelled', { kind: 'input_required', requests: { k: { method: 'elicitation/create' } } }],
  ] as const) {
    const task = await h.store.create(newTask({ createdAt: T0 + (name === 'waitCancelled' ? 6 : 7) }));
    const run = must(await h.store.claim('w1', 1_000, T0 + 50));
    expect(await h.store.requestCancel(task.id, ALICE, T0 + 60)).toMatchObject({ ok: true });
    expect(await h.store.finish(run.id, run.token, ending, T0 + 100)).toBe(true);
    ids[name] = task.id;
  }
  const idle = await h.store.create(newTask({ createdAt: T0 + 8 }));
  await h.store.requestCancel(idle.id, ALICE, T0 + 108);
  ids.idleCancelled = idle.id;
  const expiring = await h.store.create(newTask({ createdAt: T0 + 9, ttlMs: 100 }));
  expect(await h.store.expire(T0 + 109)).toBe(1);
  ids.expired = expiring.id;
  ids.working = (await h.store.create(newTask({ createdAt: T0 + 10 }))).id;
  return ids;
}

export function adminOutcomeContract(h: ContractStore): void {
  describe('operators: outcomes', () => {
    it('keeps how each task ended on every terminal path, its status the MCP one', async () => {
      const ids = await seedEndings(h);
      const outcomes = Object.fromEntries(
        await Promise.all(
          Object.entries(ids).map(async ([name, id]) => {
            const detail = must(await adminOf(h).detail(ALL, id, T0 + 200));
            return [name, [detail.status, detail.outcome]] as const;
          }),
        ),
      );
      expect(outcomes).toEqual({
        clean: ['completed', 'completed'],
        returned: ['completed', 'tool_error'],
        threw: ['completed', 'tool_error'],
        failed: ['failed', 'failed'],
        cancelled: ['cancelled', 'cancelled'],
        waitCancelled: ['cancelled', 'cancelled'],
        askCancelled: ['cancelled', 'cancelled'],
        idleCancelled: ['cancelled', 'cancelled'],
        expired: ['failed', 'failed'],
        working: ['working', undefined],
      });
      // The owner reads a tool error as completed, with its isError result.
      const owner = await h.store.get(ids.returned as string, ALICE, T0 + 200);
      expect(owner).toMatchObject({ status: 'completed', result: text('Billing API said NO') });
      const [row] = (await adminOf(h).list(ALL, { limit: 1, tool: 'report' }, T0 + 200)).items;
      expect(row).toMatchObject({ id: ids.returned, status: 'completed', outcome: 'tool_error' });
    });

    it('searches by outcome, and counts tool errors as errors', async () => {
      const ids = await seedEndings(h);
      const list = (query = {}) => listed(h, ids, ALL, query);
      expect(await list({ outcome: ['tool_error'] })).toEqual(['threw', 'returned']);
      expect(await list({ outcome: ['completed'] })).toEqual(['clean']);
      expect(await list({ outcome: ['failed', 'tool_error'] })).toEqual([
        'expired',
        'failed',
        'threw',
        'returned',
      ]);
      expect(await list({ outcome: ['cancelled'], order: 'asc' })).toEqual([
        'cancelled',
        'waitCancelled',
        'askCancelled',
        'idleCancelled',
      ]);
      expect(await list({ outcome: [] })).toEqual([]);
      expect(await list({ outcome: ['tool_error'], status: ['completed'], tenant: 'acme' })).toEqual([
        'returned',
      ]);
      expect(await list({ outcome: ['tool_error'], sort: 'updated' })).toEqual(['threw', 'returned']);
      expect(await list({ hasError: true })).toEqual(['expired', 'failed', 'threw', 'returned']);
      expect(await list({ hasError: false, order: 'asc' })).toEqual([
        'clean',
        'cancelled',
        'waitCancelled',
        'askCancelled',
        'idleCancelled',
        'working',
      ]);
      // A tool error's text: what the result says, or the message of the error the tool threw.
      expect(await list({ errorText: 'api SAID no' })).toEqual(['returned']);
      expect(await list({ errorText: 'cannot read QUOTA' })).toEqual(['threw']);
      expect(await list({ errorText: 'disk' })).toEqual(['failed']);
      expect(await list({ errorText: 'type' })).toEqual([]); // the result's item types are not its text
      const lost = ['lost'] as never;
      await expect(adminOf(h).list(ALL, { limit: 5, outcome: lost }, h.t)).rejects.toBeInstanceOf(
        AdminQueryError,
      );
    });

    it('counts finished tasks by outcome, within the scope, and tool errors in the windows', async () => {
      await seedEndings(h);
      const options = { windowsMs: [150, 1_000], stuckMs: 1_000 };
      const all = await adminOf(h).overview(ALL, T0 + 200, options);
      expect(all.byStatus).toEqual({ working: 1, input_required: 0, completed: 3, failed: 2, cancelled: 4 });
      expect(all.byOutcome).toEqual({ completed: 1, tool_error: 2, failed: 2, cancelled: 4 });
      expect(all.windows).toEqual([
        { windowMs: 150, created: 0, completed: 3, failed: 2, toolErrors: 2 },
        { windowMs: 1_000, created: 10, completed: 3, failed: 2, toolErrors: 2 },
      ]);
      // By tool, a tool's completed tasks are one count, tool errors or not.
      expect(all.byTool.filter((r) => r.tool === 'echo' && r.status === 'completed')).toEqual([
        { tool: 'echo', toolVersion: undefined, status: 'completed', count: 2 },
      ]);
      const acme = await adminOf(h).overview({ tenants: ['acme'] }, T0 + 200, options);
      expect(acme.byOutcome).toEqual({ completed: 1, tool_error: 1, failed: 2, cancelled: 4 });
      expect(acme.windows[0]).toMatchObject({ toolErrors: 1 });
    });
  });
}
