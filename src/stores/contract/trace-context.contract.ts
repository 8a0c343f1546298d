// The TaskStore contract: the trace context a task keeps (NewTask.trace, migration 31). Every claim of the task, a
// crash takeover on another process too, hands it to the run; operators read its trace id.
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../../tasks/store.js';
import { LEASE, newTask, type ContractStore } from './harness.contract.js';

const TRACE_PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACE_STATE = 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7';

export function traceContextContract(h: ContractStore): void {
  describe('trace context', () => {
    it('hands the kept trace context to every claim of the task, a takeover too', async () => {
      const trace = { traceParent: TRACE_PARENT, traceState: TRACE_STATE };
      const { id } = await h.store.create(newTask({ createdAt: h.t, trace }));
      const first = await h.store.claim('replica-a', LEASE, h.t);
      expect(first).toMatchObject({ id, trace });
      // Replica A's lease lapses: replica B takes the task over, with the same trace to join.
      const second = await h.store.claim('replica-b', LEASE, h.t + LEASE + 1);
      expect(second).toMatchObject({ id, takenOver: true, trace });
    });

    it('keeps a traceparent without a tracestate, and no trace for a task created without one', async () => {
      const { id: traced } = await h.store.create(
        newTask({ createdAt: h.t, trace: { traceParent: TRACE_PARENT } }),
      );
      const { id: plain } = await h.store.create(newTask({ createdAt: h.t + 1 }));
      const claims = [await h.store.claim('w', LEASE, h.t + 2), await h.store.claim('w', LEASE, h.t + 2)];
      const byId = new Map(claims.map((c) => [c?.id, c]));
      expect(byId.get(traced)?.trace).toEqual({ traceParent: TRACE_PARENT });
      expect(byId.get(plain)).toBeDefined();
      expect(byId.get(plain)?.trace).toBeUndefined();
    });

    it("shows operators the task's trace id", async () => {
      if (h.store.inspect === undefined) return;
      const { id } = await h.store.create(newTask({ createdAt: h.t, trace: { traceParent: TRACE_PARENT } }));
      const { id: plain } = await h.store.create(newTask({ createdAt: h.t }));
      expect((await h.store.inspect(id, h.t))?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
      expect((await h.store.inspect(plain, h.t))?.traceId).toBeUndefined();
    });
  });
}

/** After an upgrade to migration 31, tasks created with a trace context keep it for their runs. */
export async function expectTraceAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const trace = { traceParent: TRACE_PARENT, traceState: TRACE_STATE };
  const { id } = await store.create(newTask({ createdAt: now, trace }));
  let run = await store.claim('w', LEASE, now);
  // Tasks left runnable by the upgrade test run first.
  for (let i = 0; i < 100 && run !== undefined && run.id !== id; i++)
    run = await store.claim('w', LEASE, now);
  expect(run).toMatchObject({ id, trace });
}
