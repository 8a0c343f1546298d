// The TaskStore contract every backend must pass: port behaviour only (never SQL), time always injected.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newTaskId } from '../tasks/ids.js';
import type { TaskChange, TaskStore } from '../tasks/store.js';
import { IdempotencyConflictError } from '../tasks/errors.js';
import type {
  ClaimedTask,
  JsonMap,
  NewTask,
  StepFailure,
  TaskFailure,
  TaskOwner,
  TaskSnapshot,
} from '../tasks/task.js';

export interface TaskStoreContractOptions {
  name: string;
  newStore: () => Promise<TaskStore> | TaskStore;
  /** A second instance on the storage of the store newStore last made (as another process or replica would have). */
  openPeer?: () => Promise<TaskStore> | TaskStore;
}

const T0 = 1_700_000_000_000;
const LEASE = 1_000;
const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
const BOB: TaskOwner = { tenant: 'acme', principal: 'bob' };
const OTHER_TENANT: TaskOwner = { tenant: 'globex', principal: 'alice' };
const EXPIRED_ERROR = { code: -32603, message: 'task expired' };

export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    id: newTaskId(),
    owner: ALICE,
    tool: 'echo',
    args: { text: 'hello', n: 1 },
    createdAt: T0,
    ttlMs: 60_000,
    pollIntervalMs: 500,
    statusMessage: 'Queued.',
    replayAfterCrash: true,
    clientCapabilities: { elicitation: {} },
    answers: {},
    ...overrides,
  };
}

function must<T>(value: T | undefined, what = 'value'): T {
  if (value === undefined) throw new Error(`expected a ${what}`);
  return value;
}

/**
 * What a store of an earlier release holds for an upgrade test: a task whose run has stored a step (its lease then
 * lapses) and a task waiting for an answer. The test then takes the store back to that release's schema.
 */
export async function seedUpgradeTasks(
  store: TaskStore,
  t0: number,
): Promise<{ running: string; asking: string }> {
  const running = await store.create(newTask({ createdAt: t0 }));
  const asking = await store.create(newTask({ createdAt: t0 + 1 }));
  expect((await store.claim('w', 1_000, t0))?.id).toBe(running.id);
  await store.saveStep(running.id, 1, 'fetched', { rows: 3 }, t0);
  const second = await store.claim('w', 1_000, t0);
  const requests = { confirm: { method: 'elicitation/create' } };
  await store.finish(asking.id, second?.token ?? 0, { kind: 'input_required', requests }, t0);
  return { running: running.id, asking: asking.id };
}

/**
 * After the upgrade, those tasks go on as before: the running one is taken over with its step (and no attempts
 * recorded), the asking one is answered and resumes with its answer, and the running one completes.
 */
export async function expectUpgradedTasksResume(
  store: TaskStore,
  { running, asking }: { running: string; asking: string },
  t0: number,
): Promise<void> {
  const resumed = await store.claim('w2', 1_000, t0 + 2_000);
  expect(resumed).toMatchObject({ id: running, token: 2, takenOver: true, steps: { fetched: { rows: 3 } } });
  expect(resumed?.stepAttempts).toEqual({});
  const answer = { confirm: { action: 'accept' } };
  expect(await store.answer(asking, ALICE, answer, t0 + 2_001)).toEqual({ ok: true, resumed: true });
  expect(await store.claim('w2', 1_000, t0 + 2_002)).toMatchObject({ id: asking, answers: answer });
  const result = { content: [], isError: false };
  expect(await store.finish(running, 2, { kind: 'completed', result }, t0 + 2_003)).toBe(true);
  expect(await store.get(running, ALICE, t0 + 2_004)).toMatchObject({ status: 'completed', result });
}

export function runTaskStoreContract({ name, newStore, openPeer }: TaskStoreContractOptions): void {
  describe(`TaskStore contract: ${name}`, () => {
    let store: TaskStore;
    let t: number;

    beforeEach(async () => {
      store = await newStore();
      t = T0;
    });
    afterEach(async () => {
      await store.close();
    });

    const snap = async (id: string, at = t, owner = ALICE): Promise<TaskSnapshot> => {
      const got = await store.get(id, owner, at);
      if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
      return got;
    };
    const claim = async (worker = 'w1', at = t, leaseMs = LEASE): Promise<ClaimedTask> =>
      must(await store.claim(worker, leaseMs, at), 'claimed task');
    /** Creates a task and claims it (the store must be otherwise empty of runnable work). */
    const running = async (overrides: Partial<NewTask> = {}): Promise<ClaimedTask> => {
      const task = await store.create(newTask({ createdAt: t, ...overrides }));
      const claimed = await claim();
      expect(claimed.id).toBe(task.id);
      return claimed;
    };
    /** Claims the task, suspends it asking for `keys`, and returns the run's token. */
    const suspend = async (keys: string[], at = t): Promise<ClaimedTask> => {
      const claimed = await claim('w1', at);
      const requests = Object.fromEntries(keys.map((k) => [k, { method: 'elicitation/create', key: k }]));
      expect(await store.finish(claimed.id, claimed.token, { kind: 'input_required', requests }, at)).toBe(
        true,
      );
      return claimed;
    };

    describe('create and get', () => {
      it('reads its own write: every snapshot field as created', async () => {
        const task = newTask({ ttlMs: 30_000, pollIntervalMs: 250, statusMessage: 'Starting.' });
        const created = await store.create(task);
        const expected: TaskSnapshot = {
          id: task.id,
          status: 'working',
          statusMessage: 'Starting.',
          createdAt: T0,
          updatedAt: T0,
          ttlMs: 30_000,
          pollIntervalMs: 250,
          inputRequests: {},
          result: undefined,
          error: undefined,
        };
        // The revision is the store's own (optional) numbering: the same for both, whatever its value.
        const { revision, ...fields } = created;
        expect(fields).toEqual(expected);
        const got = await snap(task.id, T0 + 1);
        expect(got).toEqual(revision === undefined ? expected : { ...expected, revision });
        expect(got.result).toBeUndefined();
        expect(got.error).toBeUndefined();
      });

      it('keeps optional fields absent when not given', async () => {
        const task = newTask({ ttlMs: null, pollIntervalMs: undefined, statusMessage: undefined });
        await store.create(task);
        const got = await snap(task.id);
        expect(got.statusMessage).toBeUndefined();
        expect(got.pollIntervalMs).toBeUndefined();
        expect(got.ttlMs).toBeNull();
      });

      it('makes every one of many concurrent creations readable', async () => {
        const tasks = Array.from({ length: 50 }, (_, i) => newTask({ createdAt: T0 + i, args: { i } }));
        const created = await Promise.all(tasks.map((task) => store.create(task)));
        expect(created.map((s) => s.id)).toEqual(tasks.map((task) => task.id));
        const got = await Promise.all(tasks.map((task) => snap(task.id, T0 + 100)));
        got.forEach((s, i) => {
          expect(s.id).toBe(tasks[i]?.id);
          expect(s.status).toBe('working');
          expect(s.createdAt).toBe(T0 + i);
        });
        expect(await store.countRunnable(T0 + 100)).toBe(50);
      });
    });

    describe('ownership and expiry', () => {
      it('answers not_found to another principal, another tenant and a never-existing id', async () => {
        const task = newTask();
        await store.create(task);
        for (const [id, owner] of [
          [task.id, BOB],
          [task.id, OTHER_TENANT],
          [newTaskId(), ALICE],
        ] as const) {
          expect(await store.get(id, owner, t)).toBe('not_found');
          expect(await store.answer(id, owner, { k: { action: 'accept' } }, t)).toEqual({
            ok: false,
            miss: 'not_found',
          });
          expect(await store.requestCancel(id, owner, t)).toEqual({ ok: false, miss: 'not_found' });
        }
        // Nothing the others did touched the owner's task.
        expect((await snap(task.id)).status).toBe('working');
      });

      it('tells only the owner that their task expired once createdAt + ttlMs has passed', async () => {
        const task = newTask({ ttlMs: 1_000 });
        await store.create(task);
        expect((await snap(task.id, T0 + 999)).status).toBe('working');
        expect(await store.get(task.id, ALICE, T0 + 1_001)).toBe('expired');
        expect(await store.answer(task.id, ALICE, {}, T0 + 1_001)).toEqual({ ok: false, miss: 'expired' });
        expect(await store.requestCancel(task.id, ALICE, T0 + 1_001)).toEqual({ ok: false, miss: 'expired' });
        expect(await store.get(task.id, BOB, T0 + 1_001)).toBe('not_found');
        expect(await store.get(task.id, OTHER_TENANT, T0 + 1_001)).toBe('not_found');
      });

      it('never expires a task whose ttlMs is null', async () => {
        const task = newTask({ ttlMs: null });
        await store.create(task);
        const far = T0 + 10 * 365 * 24 * 3_600_000;
        expect((await snap(task.id, far)).status).toBe('working');
        expect(await store.expire(far)).toBe(0);
        expect(await store.purge(far, 0)).toBe(0);
        expect((await snap(task.id, far)).status).toBe('working');
      });
    });

    describe('claim and leases', () => {
      it('claims the oldest runnable task: token 1, no steps, the answers given at creation', async () => {
        const younger = newTask({ createdAt: T0 + 10 });
        const older = newTask({
          createdAt: T0,
          tool: 'report',
          args: { topic: 'q3' },
          replayAfterCrash: false,
          clientCapabilities: { sampling: {} },
          answers: { confirm: { action: 'accept', content: { ok: true } } },
        });
        await store.create(younger);
        await store.create(older);
        t = T0 + 20;
        const claimed = await claim('w1');
        expect(claimed).toMatchObject({
          id: older.id,
          owner: ALICE,
          tool: 'report',
          args: { topic: 'q3' },
          token: 1,
          takenOver: false,
          replayAfterCrash: false,
          cancelRequested: false,
          clientCapabilities: { sampling: {} },
          steps: {},
          answers: { confirm: { action: 'accept', content: { ok: true } } },
        });
        const next = await claim('w1');
        expect(next.id).toBe(younger.id);
        expect(next.token).toBe(1);
        expect(next.answers).toEqual({});
        expect(await store.claim('w1', LEASE, t)).toBeUndefined();
      });

      it('hands a leased task to another worker only after its lease expired, with a new token', async () => {
        const task = await store.create(newTask());
        const first = await claim('w1', T0);
        expect(await store.claim('w2', LEASE, T0 + LEASE - 1)).toBeUndefined();
        expect(await store.countRunnable(T0 + LEASE - 1)).toBe(0);

        const second = await claim('w2', T0 + LEASE + 1);
        expect(second).toMatchObject({ id: task.id, token: 2, takenOver: true });
        expect(second.token).toBeGreaterThan(first.token);

        expect(await store.renew(task.id, first.token, LEASE, T0 + LEASE + 2)).toMatchObject({ held: false });
        expect(
          await store.finish(
            task.id,
            first.token,
            { kind: 'completed', result: { by: 'w1' } },
            T0 + LEASE + 2,
          ),
        ).toBe(false);
        const after = await snap(task.id, T0 + LEASE + 3);
        expect(after.status).toBe('working');
        expect(after.result).toBeUndefined();

        expect(await store.renew(task.id, second.token, LEASE, T0 + LEASE + 4)).toEqual({
          held: true,
          cancelRequested: false,
        });
        expect(
          await store.finish(
            task.id,
            second.token,
            { kind: 'completed', result: { by: 'w2' } },
            T0 + LEASE + 5,
          ),
        ).toBe(true);
        const done = await snap(task.id, T0 + LEASE + 6);
        expect(done.status).toBe('completed');
        expect(done.result).toEqual({ by: 'w2' });
      });

      it('extends the lease on renew', async () => {
        await store.create(newTask());
        const claimed = await claim('w1', T0);
        expect((await store.renew(claimed.id, claimed.token, LEASE, T0 + 900)).held).toBe(true);
        expect(await store.claim('w2', LEASE, T0 + LEASE + 1)).toBeUndefined();
        expect(await store.claim('w2', LEASE, T0 + 900 + LEASE - 1)).toBeUndefined();
        const taken = await claim('w2', T0 + 900 + LEASE + 1);
        expect(taken).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: true });
      });

      it('claims up to max tasks in one batch, oldest first, each held by one worker', async (ctx) => {
        const batch = store.claimBatch?.bind(store);
        if (batch === undefined) return ctx.skip();
        const tasks: TaskSnapshot[] = [];
        for (const i of [4, 0, 3, 1, 2]) tasks[i] = await store.create(newTask({ createdAt: T0 + i }));
        const ids = tasks.map((task) => task.id);
        const first = await batch('w1', LEASE, t, 3);
        expect(first.map((c) => c.id)).toEqual(ids.slice(0, 3));
        expect(first.map((c) => [c.token, c.takenOver])).toEqual([
          [1, false],
          [1, false],
          [1, false],
        ]);
        expect(first[0]).toMatchObject({
          tool: 'echo',
          args: { text: 'hello', n: 1 },
          steps: {},
          answers: {},
        });
        const second = await batch('w2', LEASE, t, 3);
        expect(second.map((c) => c.id)).toEqual(ids.slice(3));
        expect(await batch('w3', LEASE, t, 3)).toEqual([]);
        expect(await store.claim('w3', LEASE, t)).toBeUndefined();

        // The leases are real: once they lapse, another worker takes every task over with a new token.
        const again = await batch('w3', LEASE, t + LEASE + 1, 10);
        expect(again.map((c) => c.id)).toEqual(ids);
        expect(again.every((c) => c.token === 2 && c.takenOver)).toBe(true);
        expect(
          await store.finish(ids[0] as string, 1, { kind: 'completed', result: {} }, t + LEASE + 2),
        ).toBe(false);
      });

      it('answers renew of a never-existing task with held:false', async () => {
        expect(await store.renew(newTaskId(), 1, LEASE, t)).toMatchObject({ held: false });
      });
    });

    describe('steps', () => {
      it('persists a step saved under the current token for a run after a release', async () => {
        const claimed = await running();
        expect(await store.saveStep(claimed.id, claimed.token, 'fetch', { rows: [1, 2, 3] }, t)).toBe(true);
        expect(await store.saveStep(claimed.id, claimed.token, 'count', 3, t)).toBe(true);
        expect(await store.finish(claimed.id, claimed.token, { kind: 'released' }, t)).toBe(true);
        const again = await claim('w2');
        expect(again).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: false });
        expect(again.steps).toEqual({ fetch: { rows: [1, 2, 3] }, count: 3 });
      });

      it('persists a step across a suspension for input', async () => {
        const task = await store.create(newTask());
        const first = await claim();
        expect(await store.saveStep(task.id, first.token, 'a', 'A', t)).toBe(true);
        const requests = { k: { method: 'elicitation/create' } };
        expect(await store.finish(task.id, first.token, { kind: 'input_required', requests }, t)).toBe(true);
        expect(await store.answer(task.id, ALICE, { k: { action: 'accept' } }, t)).toEqual({
          ok: true,
          resumed: true,
        });
        const second = await claim();
        expect(second.steps).toEqual({ a: 'A' });
        expect(second.answers).toEqual({ k: { action: 'accept' } });
      });

      it('persists a step across a lease expiry, and refuses one saved under a stale token', async () => {
        const task = await store.create(newTask());
        const first = await claim('w1', T0);
        expect(await store.saveStep(task.id, first.token, 'a', 1, T0)).toBe(true);
        const second = await claim('w2', T0 + LEASE + 1);
        expect(second.steps).toEqual({ a: 1 });
        expect(await store.saveStep(task.id, first.token, 'b', 'zombie', T0 + LEASE + 2)).toBe(false);
        expect(await store.saveStep(task.id, first.token, 'a', 'zombie', T0 + LEASE + 2)).toBe(false);
        expect(await store.saveStep(task.id, second.token, 'c', null, T0 + LEASE + 2)).toBe(true);
        const third = await claim('w3', T0 + 3 * LEASE);
        expect(third.steps).toEqual({ a: 1, c: null });
      });

      it('refuses steps once the task has ended', async () => {
        const claimed = await running();
        expect(await store.finish(claimed.id, claimed.token, { kind: 'completed', result: {} }, t)).toBe(
          true,
        );
        expect(await store.saveStep(claimed.id, claimed.token, 'late', 1, t)).toBe(false);
      });
    });

    describe('finish outcomes', () => {
      it('completed: stores the result and is no longer claimable', async () => {
        const claimed = await running();
        t += 10;
        const result = { content: [{ type: 'text', text: 'done' }], isError: false };
        expect(await store.finish(claimed.id, claimed.token, { kind: 'completed', result }, t)).toBe(true);
        const got = await snap(claimed.id);
        expect(got).toMatchObject({ status: 'completed', result, error: undefined, updatedAt: T0 + 10 });
        expect(got.inputRequests).toEqual({});
        expect(await store.claim('w2', LEASE, t + 10 * LEASE)).toBeUndefined();
        expect(await store.countRunnable(t + 10 * LEASE)).toBe(0);
      });

      it('failed: stores the error and the status message', async () => {
        const claimed = await running();
        const error = { code: -32000, message: 'upstream broke', data: { retry: false } };
        expect(
          await store.finish(
            claimed.id,
            claimed.token,
            { kind: 'failed', error, statusMessage: 'It broke.' },
            t,
          ),
        ).toBe(true);
        expect(await snap(claimed.id)).toMatchObject({
          status: 'failed',
          error,
          statusMessage: 'It broke.',
          result: undefined,
        });
        expect(await store.claim('w2', LEASE, t + 10 * LEASE)).toBeUndefined();
      });

      it('cancelled: ends the task cancelled', async () => {
        const claimed = await running();
        expect(await store.finish(claimed.id, claimed.token, { kind: 'cancelled' }, t)).toBe(true);
        const got = await snap(claimed.id);
        expect(got.status).toBe('cancelled');
        expect(got.result).toBeUndefined();
        expect(await store.claim('w2', LEASE, t + 10 * LEASE)).toBeUndefined();
      });

      it('released: runnable again at once, with the same steps and a fresh token', async () => {
        const claimed = await running();
        await store.saveStep(claimed.id, claimed.token, 's', { v: 1 }, t);
        expect(await store.finish(claimed.id, claimed.token, { kind: 'released' }, t)).toBe(true);
        expect((await snap(claimed.id)).status).toBe('working');
        expect(await store.countRunnable(t)).toBe(1);
        const again = await claim('w2', t);
        expect(again).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: false });
        expect(again.steps).toEqual({ s: { v: 1 } });
        expect(await store.finish(claimed.id, claimed.token, { kind: 'completed', result: {} }, t)).toBe(
          false,
        );
      });

      it('input_required: waits for every outstanding key, then runs with all answers', async () => {
        const task = await store.create(
          newTask({ answers: { early: { action: 'accept', content: { name: 'x' } } } }),
        );
        t += 5;
        const run = await suspend(['a', 'b']);
        expect(run.answers).toEqual({ early: { action: 'accept', content: { name: 'x' } } });
        const waiting = await snap(task.id);
        expect(waiting.status).toBe('input_required');
        expect(waiting.inputRequests).toEqual({
          a: { method: 'elicitation/create', key: 'a' },
          b: { method: 'elicitation/create', key: 'b' },
        });
        expect(waiting.updatedAt).toBe(T0 + 5);
        expect(await store.claim('w2', LEASE, t + 10 * LEASE)).toBeUndefined();
        expect(await store.countRunnable(t)).toBe(0);

        t += 5;
        expect(
          await store.answer(task.id, ALICE, { a: { action: 'accept', content: { v: 'A' } } }, t),
        ).toEqual({ ok: true, resumed: false });
        let got = await snap(task.id);
        expect(got.status).toBe('input_required');
        expect(Object.keys(got.inputRequests)).toEqual(['b']);

        // Unknown, already answered and creation-time keys are ignored.
        const ignored: Record<string, JsonMap>[] = [
          { nope: { action: 'accept' } },
          { a: { action: 'decline' } },
          { early: { action: 'decline' } },
          {},
        ];
        for (const responses of ignored) {
          expect(await store.answer(task.id, ALICE, responses, t)).toEqual({ ok: true, resumed: false });
        }
        got = await snap(task.id);
        expect(got.status).toBe('input_required');
        expect(Object.keys(got.inputRequests)).toEqual(['b']);
        expect(await store.claim('w2', LEASE, t)).toBeUndefined();

        t += 5;
        expect(
          await store.answer(
            task.id,
            ALICE,
            { b: { action: 'accept', content: { v: 'B' } }, stray: { action: 'accept' } },
            t,
          ),
        ).toEqual({ ok: true, resumed: true });
        got = await snap(task.id);
        expect(got.status).toBe('working');
        expect(got.inputRequests).toEqual({});
        expect(got.updatedAt).toBe(T0 + 15);
        expect(await store.countRunnable(t)).toBe(1);

        const resumed = await claim('w2');
        expect(resumed.token).toBe(run.token + 1);
        expect(resumed.takenOver).toBe(false);
        expect(resumed.answers).toEqual({
          early: { action: 'accept', content: { name: 'x' } },
          a: { action: 'accept', content: { v: 'A' } },
          b: { action: 'accept', content: { v: 'B' } },
        });
        expect([...resumed.askedKeys].sort()).toEqual(expect.arrayContaining(['a', 'b']));
        expect(resumed.askedKeys).not.toContain('nope');
        expect(resumed.askedKeys).not.toContain('stray');
      });

      it('input_required: a later suspension asks only its own keys; earlier keys stay closed', async () => {
        // Through the port a task runs again only once every outstanding key is answered, so superseded
        // keys are observable only as keys of an earlier suspension that a later one no longer asks.
        const task = await store.create(newTask());
        await suspend(['a', 'b']);
        expect(await store.answer(task.id, ALICE, { a: { v: 1 }, b: { v: 2 } }, t)).toEqual({
          ok: true,
          resumed: true,
        });
        t += 1;
        const second = await suspend(['c', 'd']);
        expect(second.answers).toEqual({ a: { v: 1 }, b: { v: 2 } });
        expect(Object.keys((await snap(task.id)).inputRequests).sort()).toEqual(['c', 'd']);
        expect(await store.answer(task.id, ALICE, { a: { v: 'late' }, b: { v: 'late' } }, t)).toEqual({
          ok: true,
          resumed: false,
        });
        expect(await store.answer(task.id, ALICE, { c: { v: 3 } }, t)).toEqual({ ok: true, resumed: false });
        expect(Object.keys((await snap(task.id)).inputRequests)).toEqual(['d']);
        expect(await store.answer(task.id, ALICE, { d: { v: 4 } }, t)).toEqual({ ok: true, resumed: true });
        const third = await claim();
        expect(third.answers).toEqual({ a: { v: 1 }, b: { v: 2 }, c: { v: 3 }, d: { v: 4 } });
        expect([...third.askedKeys].sort()).toEqual(['a', 'b', 'c', 'd']);
      });

      it('refuses a second finish of the same run', async () => {
        const claimed = await running();
        expect(
          await store.finish(claimed.id, claimed.token, { kind: 'completed', result: { n: 1 } }, t),
        ).toBe(true);
        expect(
          await store.finish(claimed.id, claimed.token, { kind: 'completed', result: { n: 2 } }, t),
        ).toBe(false);
        expect(await store.finish(claimed.id, claimed.token, { kind: 'released' }, t)).toBe(false);
        expect(
          await store.finish(claimed.id, claimed.token, { kind: 'input_required', requests: { k: {} } }, t),
        ).toBe(false);
        const got = await snap(claimed.id);
        expect(got.status).toBe('completed');
        expect(got.result).toEqual({ n: 1 });
        expect(got.inputRequests).toEqual({});
      });
    });

    describe('terminal states never change', () => {
      it('keeps a completed task completed whatever comes after', async () => {
        const claimed = await running();
        const result = { answer: 42 };
        expect(await store.finish(claimed.id, claimed.token, { kind: 'completed', result }, t)).toBe(true);
        const before = await snap(claimed.id);
        t += 100;
        expect(await store.finish(claimed.id, claimed.token, { kind: 'cancelled' }, t)).toBe(false);
        expect(
          await store.finish(
            claimed.id,
            claimed.token,
            { kind: 'failed', error: { code: -1, message: 'x' }, statusMessage: 'x' },
            t,
          ),
        ).toBe(false);
        expect(await store.requestCancel(claimed.id, ALICE, t)).toEqual({
          ok: true,
          cancelledNow: false,
          running: false,
        });
        expect(await store.answer(claimed.id, ALICE, { k: { action: 'accept' } }, t)).toEqual({
          ok: true,
          resumed: false,
        });
        expect(await store.renew(claimed.id, claimed.token, LEASE, t)).toMatchObject({ held: false });
        expect(await store.setStatusMessage(claimed.id, claimed.token, 'late', t)).toBe(false);
        expect(await store.expire(t)).toBe(0);
        expect(await snap(claimed.id)).toEqual(before);
      });

      it('acknowledges a cancel of a failed or cancelled task without changing it', async () => {
        const failed = await running();
        const error = { code: -32603, message: 'boom' };
        await store.finish(failed.id, failed.token, { kind: 'failed', error, statusMessage: 'Boom.' }, t);
        const cancelled = await running();
        await store.finish(cancelled.id, cancelled.token, { kind: 'cancelled' }, t);
        for (const [id, status] of [
          [failed.id, 'failed'],
          [cancelled.id, 'cancelled'],
        ] as const) {
          const before = await snap(id);
          expect(await store.requestCancel(id, ALICE, t + 1)).toMatchObject({
            ok: true,
            cancelledNow: false,
          });
          expect(await snap(id)).toEqual(before);
          expect(before.status).toBe(status);
        }
      });
    });

    describe('cancellation', () => {
      it('cancels a task waiting for a worker at once', async () => {
        const task = await store.create(newTask());
        t += 3;
        expect(await store.requestCancel(task.id, ALICE, t)).toEqual({
          ok: true,
          cancelledNow: true,
          running: false,
        });
        const got = await snap(task.id);
        expect(got.status).toBe('cancelled');
        expect(got.updatedAt).toBe(T0 + 3);
        expect(await store.claim('w1', LEASE, t)).toBeUndefined();
        expect(await store.countRunnable(t)).toBe(0);
      });

      it('cancels a task waiting for input at once, and ignores answers afterwards', async () => {
        const task = await store.create(newTask());
        await suspend(['k']);
        expect(await store.requestCancel(task.id, ALICE, t)).toEqual({
          ok: true,
          cancelledNow: true,
          running: false,
        });
        expect(await store.answer(task.id, ALICE, { k: { action: 'accept' } }, t)).toEqual({
          ok: true,
          resumed: false,
        });
        const got = await snap(task.id);
        expect(got.status).toBe('cancelled');
        expect(got.inputRequests).toEqual({});
        expect(await store.claim('w1', LEASE, t)).toBeUndefined();
      });

      it('cancels a task whose lease expired (its worker is gone) at once', async () => {
        const claimed = await running();
        expect(await store.requestCancel(claimed.id, ALICE, t + LEASE + 1)).toMatchObject({
          ok: true,
          cancelledNow: true,
        });
        expect((await snap(claimed.id, t + LEASE + 1)).status).toBe('cancelled');
        expect(await store.finish(claimed.id, claimed.token, { kind: 'completed', result: {} }, t)).toBe(
          false,
        );
      });

      it('flags a running task: status unchanged, renew and a claim after a crash report it', async () => {
        const claimed = await running();
        expect(await store.requestCancel(claimed.id, ALICE, t + 1)).toEqual({
          ok: true,
          cancelledNow: false,
          running: true,
        });
        expect((await snap(claimed.id, t + 1)).status).toBe('working');
        expect(await store.renew(claimed.id, claimed.token, LEASE, t + 2)).toEqual({
          held: true,
          cancelRequested: true,
        });
        const again = await claim('w2', t + 2 + LEASE + 1);
        expect(again.cancelRequested).toBe(true);
        expect(await store.finish(again.id, again.token, { kind: 'cancelled' }, t + LEASE + 4)).toBe(true);
        expect((await snap(claimed.id, t + LEASE + 4)).status).toBe('cancelled');
      });

      it('ends a cancel-requested task cancelled when its run then asks for input', async () => {
        const claimed = await running();
        await store.requestCancel(claimed.id, ALICE, t);
        expect(
          await store.finish(claimed.id, claimed.token, { kind: 'input_required', requests: { k: {} } }, t),
        ).toBe(true);
        const got = await snap(claimed.id);
        expect(got.status).toBe('cancelled');
        expect(got.inputRequests).toEqual({});
        expect(await store.claim('w2', LEASE, t + 10 * LEASE)).toBeUndefined();
      });

      it('lets a cancel-requested run still complete (the first terminal write wins)', async () => {
        const claimed = await running();
        await store.requestCancel(claimed.id, ALICE, t);
        expect(
          await store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: 1 } }, t),
        ).toBe(true);
        expect(await snap(claimed.id)).toMatchObject({ status: 'completed', result: { ok: 1 } });
      });

      it('never overwrites a terminal state when cancel and completion race', async () => {
        for (let i = 0; i < 200; i++) {
          t = T0 + i * 10 * LEASE;
          const claimed = await running();
          // Half the cancels arrive while the lease is valid (flag), half after it lapsed (cancel at once).
          const cancelAt = i % 4 < 2 ? t + 1 : t + LEASE + 1;
          const result = { i };
          const cancel = () => store.requestCancel(claimed.id, ALICE, cancelAt);
          const finish = () => store.finish(claimed.id, claimed.token, { kind: 'completed', result }, t + 1);
          let finished: boolean;
          let cancelled: Awaited<ReturnType<TaskStore['requestCancel']>>;
          if (i % 2 === 0) [cancelled, finished] = await Promise.all([cancel(), finish()]);
          else [finished, cancelled] = await Promise.all([finish(), cancel()]);

          const got = await snap(claimed.id, cancelAt);
          expect(['completed', 'cancelled'], `iteration ${i}`).toContain(got.status);
          if (finished) {
            expect(got.status, `iteration ${i}`).toBe('completed');
            expect(got.result, `iteration ${i}`).toEqual(result);
            expect(cancelled).toMatchObject({ ok: true, cancelledNow: false });
          } else {
            expect(got.status, `iteration ${i}`).toBe('cancelled');
            expect(got.result, `iteration ${i}`).toBeUndefined();
            expect(cancelled).toMatchObject({ ok: true, cancelledNow: true });
          }
          // Nothing that comes later changes the outcome.
          await store.requestCancel(claimed.id, ALICE, cancelAt + 1);
          await store.finish(claimed.id, claimed.token, { kind: 'cancelled' }, cancelAt + 1);
          await store.finish(
            claimed.id,
            claimed.token,
            { kind: 'completed', result: { late: true } },
            cancelAt + 1,
          );
          expect(await snap(claimed.id, cancelAt + 1), `iteration ${i}`).toEqual(got);
        }
      });
    });

    describe('status messages', () => {
      it('updates statusMessage and updatedAt under the current token only', async () => {
        const claimed = await running();
        t += 7;
        expect(await store.setStatusMessage(claimed.id, claimed.token, 'Halfway there.', t)).toBe(true);
        expect(await snap(claimed.id)).toMatchObject({
          status: 'working',
          statusMessage: 'Halfway there.',
          updatedAt: T0 + 7,
        });
        const second = await claim('w2', t + LEASE + 1);
        expect(await store.setStatusMessage(claimed.id, claimed.token, 'zombie', t + LEASE + 2)).toBe(false);
        expect(await store.setStatusMessage(claimed.id, second.token, 'Resumed.', t + LEASE + 3)).toBe(true);
        expect(await snap(claimed.id, t + LEASE + 3)).toMatchObject({
          statusMessage: 'Resumed.',
          updatedAt: t + LEASE + 3,
        });
      });
    });

    describe('expire and purge', () => {
      it('fails non-terminal tasks past their TTL and leaves the others alone', async () => {
        const leased = await store.create(newTask({ ttlMs: 1_000, createdAt: T0 }));
        const asking = await store.create(newTask({ ttlMs: 1_000, createdAt: T0 + 1 }));
        const done = await store.create(newTask({ ttlMs: 1_000, createdAt: T0 + 2 }));
        const leasedRun = await claim('w1', T0 + 10);
        const askingRun = await claim('w1', T0 + 10);
        const doneRun = await claim('w1', T0 + 10);
        expect([leasedRun.id, askingRun.id, doneRun.id]).toEqual([leased.id, asking.id, done.id]);
        await store.finish(
          asking.id,
          askingRun.token,
          { kind: 'input_required', requests: { k: {} } },
          T0 + 10,
        );
        await store.finish(done.id, doneRun.token, { kind: 'completed', result: { ok: true } }, T0 + 10);
        const waiting = await store.create(newTask({ ttlMs: 1_000, createdAt: T0 + 3 }));
        const young = await store.create(newTask({ ttlMs: 5_000, createdAt: T0 + 4 }));
        const forever = await store.create(newTask({ ttlMs: null, createdAt: T0 + 5 }));
        const doneBefore = await snap(done.id, T0 + 10);

        expect(await store.expire(T0 + 999)).toBe(0);
        // Past the TTL of leased, asking, done and waiting; the lease (until T0 + 1010) still holds.
        t = T0 + 1_004;
        expect(await store.expire(t)).toBe(3);
        expect(await store.expire(t)).toBe(0);

        for (const task of [leased, asking, waiting]) {
          expect(await store.get(task.id, ALICE, t)).toBe('expired');
          const tombstone = await snap(task.id, T0 + 500);
          expect(tombstone.status).toBe('failed');
          expect(tombstone.error).toEqual(EXPIRED_ERROR);
          expect(tombstone.result).toBeUndefined();
          expect(tombstone.inputRequests).toEqual({});
        }
        expect(await snap(done.id, T0 + 10)).toEqual(doneBefore);
        expect((await snap(young.id)).status).toBe('working');
        expect((await snap(forever.id)).status).toBe('working');

        // The expired run has lost its lease: its writes are refused and the tombstone stays.
        expect(await store.renew(leased.id, leasedRun.token, LEASE, t)).toMatchObject({ held: false });
        expect(await store.saveStep(leased.id, leasedRun.token, 's', 1, t)).toBe(false);
        expect(
          await store.finish(leased.id, leasedRun.token, { kind: 'completed', result: { late: true } }, t),
        ).toBe(false);
        expect((await snap(leased.id, T0 + 500)).error).toEqual(EXPIRED_ERROR);
        // Only the young and the unlimited tasks can still run.
        expect(await store.countRunnable(t + LEASE)).toBe(2);
      });

      it('purges only tasks whose expiry plus the grace has passed', async () => {
        const grace = 10_000;
        const finished = await running(); // default TTL: 60 s
        await store.finish(finished.id, finished.token, { kind: 'completed', result: {} }, t);
        const old = await store.create(newTask({ ttlMs: 1_000 }));
        const newer = await store.create(newTask({ ttlMs: 5_000 }));
        const forever = await store.create(newTask({ ttlMs: null }));

        expect(await store.purge(T0 + 1_000 + grace - 1, grace)).toBe(0);
        expect(await store.expire(T0 + 1_000 + grace + 1)).toBe(2);
        expect(await store.purge(T0 + 1_000 + grace + 1, grace)).toBe(1);
        expect(await store.get(old.id, ALICE, T0)).toBe('not_found');
        expect((await snap(newer.id, T0)).status).toBe('failed');

        expect(await store.purge(T0 + 60_000 + grace + 1, grace)).toBe(2);
        expect(await store.get(newer.id, ALICE, T0)).toBe('not_found');
        expect(await store.get(finished.id, ALICE, T0)).toBe('not_found');
        expect(await store.answer(finished.id, ALICE, {}, T0)).toEqual({ ok: false, miss: 'not_found' });
        expect(await store.requestCancel(finished.id, ALICE, T0)).toEqual({ ok: false, miss: 'not_found' });
        expect((await snap(forever.id, T0 + 60_000 + grace + 1)).status).toBe('working');
        expect(await store.purge(T0 + 1_000_000_000, grace)).toBe(0);
      });
    });

    describe('countRunnable', () => {
      it('counts tasks waiting for a worker, including ones whose lease expired', async () => {
        expect(await store.countRunnable(t)).toBe(0);
        const a = await store.create(newTask({ createdAt: T0 }));
        await store.create(newTask({ createdAt: T0 + 1 }));
        await store.create(newTask({ createdAt: T0 + 2 }));
        expect(await store.countRunnable(t)).toBe(3);
        const first = await claim('w1', t);
        expect(first.id).toBe(a.id);
        expect(await store.countRunnable(t)).toBe(2);
        expect(await store.countRunnable(t + LEASE + 1)).toBe(3);
        const requests = { k: {} };
        await store.finish(first.id, first.token, { kind: 'input_required', requests }, t);
        expect(await store.countRunnable(t + LEASE + 1)).toBe(2);
        await store.answer(first.id, ALICE, { k: { action: 'accept' } }, t);
        expect(await store.countRunnable(t)).toBe(3);
      });
    });

    describe('stats', () => {
      it('counts tasks by status and the runnable backlog as tasks are created, run, suspended and end', async (ctx) => {
        const read = store.stats?.bind(store);
        if (read === undefined) return ctx.skip();
        const counts = async (at = t) => {
          const stats = await read(at);
          return { ...stats.byStatus, runnable: stats.runnable };
        };
        const none = { working: 0, input_required: 0, completed: 0, failed: 0, cancelled: 0, runnable: 0 };
        expect(await counts()).toEqual(none);
        const a = await store.create(newTask({ createdAt: T0 }));
        await store.create(newTask({ createdAt: T0 + 1 }));
        await store.create(newTask({ createdAt: T0 + 2 }));
        expect(await counts()).toEqual({ ...none, working: 3, runnable: 3 });

        const runA = await claim('w1', t);
        expect(runA.id).toBe(a.id);
        expect(await counts()).toEqual({ ...none, working: 3, runnable: 2 });
        // An expired lease puts the task back in the backlog; an expired TTL takes every task out of it.
        expect(await counts(t + LEASE + 1)).toEqual({ ...none, working: 3, runnable: 3 });
        expect(await counts(T0 + 60_002)).toEqual({ ...none, working: 3, runnable: 0 });

        await store.finish(runA.id, runA.token, { kind: 'input_required', requests: { k: {} } }, t);
        expect(await counts()).toEqual({ ...none, working: 2, input_required: 1, runnable: 2 });
        const runB = await claim('w1', t);
        await store.finish(runB.id, runB.token, { kind: 'completed', result: {} }, t);
        const runC = await claim('w1', t);
        const error = { code: -32000, message: 'broke' };
        await store.finish(runC.id, runC.token, { kind: 'failed', error, statusMessage: 'It broke.' }, t);
        expect(await counts()).toEqual({ ...none, input_required: 1, completed: 1, failed: 1 });

        await store.answer(a.id, ALICE, { k: { action: 'accept' } }, t);
        expect(await counts()).toEqual({ ...none, working: 1, completed: 1, failed: 1, runnable: 1 });
        await store.requestCancel(a.id, ALICE, t);
        expect(await counts()).toEqual({ ...none, completed: 1, failed: 1, cancelled: 1 });
        expect(await store.purge(T0 + 60_002, 0)).toBe(3);
        expect(await counts()).toEqual(none);
      });
    });

    describe('change feed', () => {
      it('reports creation, resumption and cancellation requests', async (ctx) => {
        const feed = store.changes;
        if (feed === undefined) return ctx.skip();
        const seen: TaskChange[] = [];
        const unsubscribe = feed.subscribe((c) => seen.push(c));
        const task = await store.create(newTask());
        expect(seen).toContainEqual(expect.objectContaining({ taskId: task.id, runnable: true }));

        await suspend(['k']);
        seen.length = 0;
        await store.answer(task.id, ALICE, { k: { action: 'accept' } }, t);
        expect(seen).toContainEqual(expect.objectContaining({ taskId: task.id, runnable: true }));

        const run = await claim();
        seen.length = 0;
        await store.requestCancel(task.id, ALICE, t + 1);
        expect(seen).toContainEqual(expect.objectContaining({ taskId: task.id, cancelRequested: true }));

        unsubscribe();
        seen.length = 0;
        await store.finish(run.id, run.token, { kind: 'cancelled' }, t + 2);
        await store.create(newTask());
        expect(seen).toEqual([]);
      });
    });

    describe('committed snapshots', () => {
      it('numbers every write, and carries in its changes only snapshots equal to what get then answers', async () => {
        const seen: TaskChange[] = [];
        const unsubscribe = store.changes?.subscribe((c) => seen.push(c));
        const revisions: (number | undefined)[] = [];
        /** After a write of `id`: its changes' committed snapshots are what get answers now. */
        const check = async (id: string, at: number): Promise<void> => {
          const now = await snap(id, at);
          revisions.push(now.revision);
          for (const c of seen.splice(0)) {
            if (c.committed === undefined) continue;
            expect(c.taskId).toBe(id);
            expect(c.committed.snapshot()).toEqual(now);
            expect(c.committed.revision).toBe(now.revision);
            expect(c.committed.expiresAt).toBe(now.ttlMs === null ? null : now.createdAt + now.ttlMs);
          }
        };
        const task = await store.create(newTask({ createdAt: t }));
        await check(task.id, t);
        const first = await claim('w1', t);
        await check(task.id, t);
        expect(await store.setStatusMessage(task.id, first.token, 'Halfway.', t + 1)).toBe(true);
        await check(task.id, t + 1);
        const requests = { k: { method: 'elicitation/create', key: 'k' } };
        await store.finish(task.id, first.token, { kind: 'input_required', requests }, t + 2);
        await check(task.id, t + 2);
        await store.answer(task.id, ALICE, { k: { action: 'accept' } }, t + 3);
        await check(task.id, t + 3);
        const second = await claim('w1', t + 4);
        await check(task.id, t + 4);
        await store.finish(task.id, second.token, { kind: 'completed', result: { n: 2 } }, t + 5);
        await check(task.id, t + 5);

        const waiting = await store.create(newTask({ createdAt: t + 6 }));
        await check(waiting.id, t + 6);
        await store.requestCancel(waiting.id, ALICE, t + 7);
        await check(waiting.id, t + 7);
        unsubscribe?.();

        // A store that numbers its snapshots raises the number with every write.
        if (revisions[0] !== undefined) {
          const byTask = [revisions.slice(0, 7), revisions.slice(7)];
          for (const list of byTask) {
            for (let i = 1; i < list.length; i++) expect(list[i]).toBeGreaterThan(list[i - 1] as number);
          }
        } else expect(revisions.every((r) => r === undefined)).toBe(true);
      });
    });

    describe('listOwned', () => {
      it("pages through only the owner's unexpired tasks in creation order", async (ctx) => {
        const list = store.listOwned?.bind(store);
        if (list === undefined) return ctx.skip();
        // Two tasks share a creation time: the id breaks the tie.
        const mine = [T0 + 3, T0 + 1, T0 + 1, T0 + 2, T0 + 5].map((createdAt) => newTask({ createdAt }));
        for (const task of mine) await store.create(task);
        await store.create(newTask({ owner: BOB, createdAt: T0 + 1 }));
        await store.create(newTask({ owner: OTHER_TENANT, createdAt: T0 + 1 }));
        const gone = await store.create(newTask({ createdAt: T0, ttlMs: 10 }));
        const expected = [...mine]
          .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .map((task) => task.id);

        const seen: string[] = [];
        let after: { createdAt: number; id: string } | undefined;
        for (let page = 0; page < 10; page++) {
          const got = await list(ALICE, after === undefined ? { limit: 2 } : { after, limit: 2 }, T0 + 100);
          expect(got.length).toBeLessThanOrEqual(2);
          if (got.length === 0) break;
          seen.push(...got.map((s) => s.id));
          const last = got[got.length - 1] as TaskSnapshot;
          after = { createdAt: last.createdAt, id: last.id };
        }
        expect(seen).toEqual(expected);
        expect(seen).not.toContain(gone.id);
        expect((await list(BOB, { limit: 10 }, T0 + 100)).map((s) => s.id)).toHaveLength(1);
        expect(await list({ tenant: 'nobody', principal: 'alice' }, { limit: 10 }, T0 + 100)).toEqual([]);
      });

      it('reports current status and outcome, never input requests', async (ctx) => {
        const list = store.listOwned?.bind(store);
        if (list === undefined) return ctx.skip();
        const done = await store.create(newTask({ createdAt: t }));
        const asking = await store.create(newTask({ createdAt: t + 1 }));
        const first = await claim('w1', t);
        expect(first.id).toBe(done.id);
        await store.finish(done.id, first.token, { kind: 'completed', result: { isError: true } }, t + 2);
        const second = await claim('w1', t + 3);
        await store.finish(second.id, second.token, { kind: 'input_required', requests: { k: {} } }, t + 3);
        const got = await list(ALICE, { limit: 10 }, t + 4);
        expect(got.map((s) => [s.id, s.status])).toEqual([
          [done.id, 'completed'],
          [asking.id, 'input_required'],
        ]);
        expect(got[0]?.result).toEqual({ isError: true });
        expect(got[0]?.updatedAt).toBe(t + 2);
        expect(got[1]?.inputRequests).toEqual({});
      });
    });

    describe('sessions', () => {
      const sid = (): string => `s-${newTaskId()}`;

      it('keeps a session for its owner only, live until it expires', async (ctx) => {
        const sessions = store.sessions;
        if (sessions === undefined) return ctx.skip();
        const id = sid();
        const state = { protocolVersion: '2025-11-25', caps: { elicitation: {} }, n: 1 };
        await sessions.createSession({ id, owner: ALICE, state, createdAt: t, expiresAt: t + 1_000 });
        expect(await sessions.getSession(id, ALICE)).toEqual({
          id,
          owner: ALICE,
          state,
          createdAt: t,
          expiresAt: t + 1_000,
        });
        expect(await sessions.getSession(id, BOB)).toBeUndefined();
        expect(await sessions.getSession(id, OTHER_TENANT)).toBeUndefined();
        expect(await sessions.getSession(sid(), ALICE)).toBeUndefined();
        // Expired sessions are still known (their clients must hear that they ended) but no longer change.
        expect(await sessions.updateSession(id, ALICE, { state: { n: 2 } }, t + 1_000)).toBe(false);
        expect(await sessions.getSession(id, ALICE)).toMatchObject({ state, expiresAt: t + 1_000 });
      });

      it("updates state and expiry of the owner's live session only", async (ctx) => {
        const sessions = store.sessions;
        if (sessions === undefined) return ctx.skip();
        const id = sid();
        await sessions.createSession({ id, owner: ALICE, state: { a: 1 }, createdAt: t, expiresAt: t + 100 });
        expect(await sessions.updateSession(id, BOB, { state: { a: 2 } }, t + 1)).toBe(false);
        expect(await sessions.updateSession(id, ALICE, { expiresAt: t + 500 }, t + 50)).toBe(true);
        expect(await sessions.getSession(id, ALICE)).toMatchObject({ state: { a: 1 }, expiresAt: t + 500 });
        expect(await sessions.updateSession(id, ALICE, { state: { a: 3 } }, t + 200)).toBe(true);
        expect(await sessions.getSession(id, ALICE)).toMatchObject({ state: { a: 3 }, expiresAt: t + 500 });
        expect(await sessions.updateSession(sid(), ALICE, { state: { a: 5 } }, t)).toBe(false);
      });

      it('ends for the owner only, and purges what ended before a time', async (ctx) => {
        const sessions = store.sessions;
        if (sessions === undefined) return ctx.skip();
        const kept = sid();
        const stale = sid();
        await sessions.createSession({
          id: kept,
          owner: ALICE,
          state: {},
          createdAt: t,
          expiresAt: t + 10_000,
        });
        await sessions.createSession({ id: stale, owner: ALICE, state: {}, createdAt: t, expiresAt: t + 10 });
        expect(await sessions.endSession(kept, BOB, t + 5)).toBe(false);
        expect(await sessions.endSession(stale, ALICE, t + 20)).toBe(false);
        expect(await sessions.endSession(kept, ALICE, t + 20)).toBe(true);
        expect(await sessions.endSession(kept, ALICE, t + 21)).toBe(false);
        expect(await sessions.getSession(kept, ALICE)).toMatchObject({ expiresAt: t + 20 });
        expect(await sessions.updateSession(kept, ALICE, { expiresAt: t + 99_999 }, t + 21)).toBe(false);
        expect(await sessions.purgeSessions(t + 10)).toBeGreaterThanOrEqual(1);
        expect(await sessions.getSession(stale, ALICE)).toBeUndefined();
        expect(await sessions.getSession(kept, ALICE)).toBeDefined();
        expect(await sessions.purgeSessions(t + 20)).toBeGreaterThanOrEqual(1);
        expect(await sessions.getSession(kept, ALICE)).toBeUndefined();
      });

      it('keeps the answer to an open request for the process that asked it, once', async (ctx) => {
        const sessions = store.sessions;
        const requests = sessions?.requests;
        if (sessions === undefined || requests === undefined) return ctx.skip();
        const id = sid();
        const [asker, other] = [`o-${newTaskId()}`, `o-${newTaskId()}`];
        await sessions.createSession({ id, owner: ALICE, state: {}, createdAt: t, expiresAt: t + 10_000 });
        await requests.openRequest(id, 'srv-a', asker, t);
        await requests.openRequest(id, 'srv-b', other, t);
        expect(await requests.answersFor(asker)).toEqual([]);
        const answer = { jsonrpc: '2.0', id: 'srv-a', result: { action: 'accept', content: { n: 1 } } };
        expect(await requests.answerRequest(id, 'srv-a', answer)).toBe(true);
        // Only the first answer counts; nothing is kept for requests that are not open on that session.
        expect(await requests.answerRequest(id, 'srv-a', { ...answer, result: {} })).toBe(false);
        expect(await requests.answerRequest(id, 'srv-x', answer)).toBe(false);
        expect(await requests.answerRequest(sid(), 'srv-b', answer)).toBe(false);
        expect(await requests.answersFor(asker)).toEqual([
          { sessionId: id, requestId: 'srv-a', message: answer },
        ]);
        expect(await requests.answersFor(other)).toEqual([]);
        await requests.closeRequest(id, 'srv-a');
        expect(await requests.answersFor(asker)).toEqual([]);
        expect(await requests.answerRequest(id, 'srv-a', answer)).toBe(false);
        const error = { jsonrpc: '2.0', id: 'srv-b', error: { code: -1, message: 'declined' } };
        expect(await requests.answerRequest(id, 'srv-b', error)).toBe(true);
        expect(await requests.answersFor(other)).toEqual([
          { sessionId: id, requestId: 'srv-b', message: error },
        ]);
      });

      it('forgets the requests of purged sessions and those opened before the purge time', async (ctx) => {
        const sessions = store.sessions;
        const requests = sessions?.requests;
        if (sessions === undefined || requests === undefined) return ctx.skip();
        const [gone, kept] = [sid(), sid()];
        const origin = `o-${newTaskId()}`;
        for (const [id, lifeMs] of [
          [gone, 10],
          [kept, 10_000],
        ] as const) {
          await sessions.createSession({ id, owner: ALICE, state: {}, createdAt: t, expiresAt: t + lifeMs });
        }
        await requests.openRequest(gone, 'srv-1', origin, t + 5);
        await requests.openRequest(kept, 'srv-old', origin, t);
        await requests.openRequest(kept, 'srv-new', origin, t + 50);
        await sessions.purgeSessions(t + 20);
        const answer = (id: string) => ({ jsonrpc: '2.0', id, result: {} });
        expect(await requests.answerRequest(gone, 'srv-1', answer('srv-1'))).toBe(false);
        expect(await requests.answerRequest(kept, 'srv-old', answer('srv-old'))).toBe(false);
        expect(await requests.answerRequest(kept, 'srv-new', answer('srv-new'))).toBe(true);
        expect(await requests.answersFor(origin)).toEqual([
          { sessionId: kept, requestId: 'srv-new', message: answer('srv-new') },
        ]);
      });
    });

    describe('waits (retry backoffs, sleeps)', () => {
      const failureOf = (attempt: number, message = `attempt ${attempt} failed`): StepFailure => ({
        attempt,
        name: 'Error',
        message,
        stack: `Error: ${message}\n    at step`,
        at: t,
      });

      it('keeps a waiting task out of claims until its time, then hands it over with its steps', async () => {
        const claimed = await running();
        expect(await store.saveStep(claimed.id, claimed.token, 'a', 'A', t)).toBe(true);
        expect(await store.saveStepFailure(claimed.id, claimed.token, 'b', failureOf(1), t)).toBe(true);
        const waiting = { kind: 'waiting', until: t + 5_000, statusMessage: 'Retrying at T+5s.' } as const;
        expect(await store.finish(claimed.id, claimed.token, waiting, t + 1)).toBe(true);
        expect(await snap(claimed.id, t + 2)).toMatchObject({
          status: 'working',
          statusMessage: 'Retrying at T+5s.',
          updatedAt: t + 1,
        });
        expect(await store.claim('w2', LEASE, t + 4_999)).toBeUndefined();
        expect(await store.countRunnable(t + 4_999)).toBe(0);
        if (store.nextWakeAt !== undefined) {
          expect(await store.nextWakeAt(t + 2)).toBe(t + 5_000);
          expect(await store.nextWakeAt(t + 5_000)).toBeUndefined();
        }
        expect(await store.countRunnable(t + 5_000)).toBe(1);
        const again = await claim('w2', t + 5_000);
        expect(again).toMatchObject({ id: claimed.id, token: claimed.token + 1, takenOver: false });
        expect(again.steps).toEqual({ a: 'A' });
        expect(again.stepAttempts).toEqual({ b: { failed: 1, last: failureOf(1) } });
        // Claimed once: its lease holds it like any run's.
        expect(await store.claim('w3', LEASE, t + 5_000 + LEASE - 1)).toBeUndefined();
        expect(await store.nextWakeAt?.(t)).toBeUndefined();
      });

      it('claims due waits and runnable tasks oldest first, in batches too', async () => {
        const older = await store.create(newTask({ createdAt: T0 }));
        const first = await claim('w1', T0);
        const until = T0 + 100;
        await store.finish(older.id, first.token, { kind: 'waiting', until, statusMessage: 'Sleeping.' }, T0);
        const younger = await store.create(newTask({ createdAt: T0 + 50 }));
        const batch = store.claimBatch?.bind(store);
        if (batch !== undefined) {
          expect((await batch('w2', LEASE, T0 + 99, 5)).map((c) => c.id)).toEqual([younger.id]);
          const [claimed] = await batch('w2', LEASE, T0 + 100, 5);
          expect(claimed?.id).toBe(older.id);
        } else {
          expect((await claim('w2', T0 + 100)).id).toBe(older.id);
          expect((await claim('w2', T0 + 100)).id).toBe(younger.id);
        }
      });

      it('cancels a waiting task at once: it never runs again', async () => {
        const claimed = await running();
        const waiting = { kind: 'waiting', until: t + 60_000, statusMessage: 'Sleeping.' } as const;
        await store.finish(claimed.id, claimed.token, waiting, t);
        expect(await store.requestCancel(claimed.id, ALICE, t + 1)).toEqual({
          ok: true,
          cancelledNow: true,
          running: false,
        });
        expect((await snap(claimed.id, t + 2)).status).toBe('cancelled');
        expect(await store.claim('w2', LEASE, t + 60_000)).toBeUndefined();
        expect(await store.nextWakeAt?.(t)).toBeUndefined();
      });

      it('ends the task cancelled when a cancel came while its run was deciding to wait', async () => {
        const claimed = await running();
        expect(await store.requestCancel(claimed.id, ALICE, t)).toMatchObject({ running: true });
        const waiting = { kind: 'waiting', until: t + 1_000, statusMessage: 'Sleeping.' } as const;
        expect(await store.finish(claimed.id, claimed.token, waiting, t)).toBe(true);
        expect((await snap(claimed.id)).status).toBe('cancelled');
        expect(await store.claim('w2', LEASE, t + 2_000)).toBeUndefined();
      });

      it('expires a waiting task whose TTL ends first', async () => {
        const claimed = await running({ ttlMs: 10_000 });
        const waiting = { kind: 'waiting', until: t + 20_000, statusMessage: 'Sleeping.' } as const;
        await store.finish(claimed.id, claimed.token, waiting, t);
        expect(await store.expire(t + 10_000)).toBe(1);
        expect(await store.claim('w2', LEASE, t + 20_000)).toBeUndefined();
        expect(await store.countRunnable(t + 20_000)).toBe(0);
      });

      it('refuses a wait under a stale token', async () => {
        const task = await store.create(newTask());
        const first = await claim('w1', T0);
        const second = await claim('w2', T0 + LEASE + 1);
        const waiting = { kind: 'waiting', until: T0 + 60_000, statusMessage: 'Sleeping.' } as const;
        expect(await store.finish(task.id, first.token, waiting, T0 + LEASE + 2)).toBe(false);
        expect(await store.renew(task.id, second.token, LEASE, T0 + LEASE + 3)).toMatchObject({ held: true });
      });

      it('records failed step attempts under the current token only', async () => {
        const task = await store.create(newTask());
        const first = await claim('w1', T0);
        expect(await store.saveStepFailure(task.id, first.token, 's', failureOf(1), T0)).toBe(true);
        const second = await claim('w2', T0 + LEASE + 1);
        expect(second.stepAttempts).toEqual({ s: { failed: 1, last: failureOf(1) } });
        expect(await store.saveStepFailure(task.id, first.token, 's', failureOf(2, 'zombie'), t)).toBe(false);
        const final = { ...failureOf(2), final: true };
        expect(await store.saveStepFailure(task.id, second.token, 's', final, t)).toBe(true);
        await store.finish(task.id, second.token, { kind: 'released' }, t);
        const third = await claim('w3', T0 + LEASE + 2);
        expect(third.stepAttempts).toEqual({ s: { failed: 2, last: final } });
      });
    });

    describe('kept errors', () => {
      const failure: TaskFailure = {
        ref: 'err_abc',
        name: 'TypeError',
        message: 'snapshot: timed out after 500 ms',
        stack: 'TypeError: snapshot: timed out after 500 ms\n    at snapshot (tool.js:1:1)',
        step: 'snapshot',
        attempt: 3,
        at: T0,
      };

      it('keeps the error of a completed (isError) or failed task for operators, not in the snapshot', async (ctx) => {
        const inspect = store.inspect?.bind(store);
        if (inspect === undefined) return ctx.skip();
        const a = await running();
        const result = { content: [{ type: 'text', text: failure.message }], isError: true };
        const completed = { kind: 'completed', result, statusMessage: 'The tool failed.', failure } as const;
        expect(await store.finish(a.id, a.token, completed, t)).toBe(true);
        expect(await snap(a.id)).toMatchObject({
          status: 'completed',
          result,
          statusMessage: 'The tool failed.',
        });
        expect(JSON.stringify(await snap(a.id))).not.toContain('tool.js');
        expect(await inspect(a.id, t)).toMatchObject({
          id: a.id,
          owner: ALICE,
          tool: 'echo',
          status: 'completed',
          attempt: 1,
          failure,
          steps: [],
        });

        const b = await running();
        await store.saveStep(b.id, b.token, 'fetch', 1, t);
        const stepFailure = { attempt: 1, name: 'Error', message: 'no', at: t, final: true };
        await store.saveStepFailure(b.id, b.token, 'snapshot', stepFailure, t);
        const error = { code: -32603, message: 'broken' };
        const failed = { kind: 'failed', error, statusMessage: 'Broken.', failure } as const;
        expect(await store.finish(b.id, b.token, failed, t)).toBe(true);
        expect(await inspect(b.id, t)).toMatchObject({
          status: 'failed',
          error,
          failure,
          steps: [
            { name: 'fetch', done: true, failedAttempts: 0, lastFailure: undefined },
            { name: 'snapshot', done: false, failedAttempts: 1, lastFailure: stepFailure },
          ],
        });
        expect(await inspect(newTaskId(), t)).toBeUndefined();
      });
    });

    describe('idempotency keys', () => {
      const keyed = (overrides: Partial<NewTask> = {}): NewTask =>
        newTask({ idempotencyKey: 'deploy-42', createdAt: t, ...overrides });

      it('answers a creation whose key names a live task of the owner and tool with that task', async () => {
        const first = await store.create(keyed({ args: { a: 1, b: [1, { c: 2 }] } }));
        const retry = keyed({ args: { b: [1, { c: 2 }], a: 1 } });
        const again = await store.create(retry);
        expect(again.id).toBe(first.id);
        expect(await store.get(retry.id, ALICE, t)).toBe('not_found');
        expect(await store.countActive(ALICE)).toBe(1);
        expect(await store.findByIdempotencyKey(ALICE, 'echo', 'deploy-42', t)).toEqual({
          snapshot: await snap(first.id),
          args: { a: 1, b: [1, { c: 2 }] },
        });
        // A finished task is still the key's task, with its outcome.
        const claimed = await claim();
        await store.finish(claimed.id, claimed.token, { kind: 'completed', result: { ok: true } }, t);
        expect(await store.create(keyed({ args: { a: 1, b: [1, { c: 2 }] } }))).toMatchObject({
          id: first.id,
          status: 'completed',
          result: { ok: true },
        });
      });

      it('refuses the key with other arguments, and creates nothing', async () => {
        const first = await store.create(keyed({ args: { n: 1 } }));
        const other = keyed({ args: { n: 2 } });
        await expect(store.create(other)).rejects.toThrow(IdempotencyConflictError);
        expect(await store.get(other.id, ALICE, t)).toBe('not_found');
        expect((await store.findByIdempotencyKey(ALICE, 'echo', 'deploy-42', t))?.snapshot.id).toBe(first.id);
      });

      it('scopes a key by owner and tool: others with the same key get tasks of their own', async () => {
        const mine = await store.create(keyed());
        const ids = new Set([mine.id]);
        for (const overrides of [{ owner: BOB }, { owner: OTHER_TENANT }, { tool: 'other' }])
          ids.add((await store.create(keyed(overrides))).id);
        expect(ids.size).toBe(4);
        expect(await store.findByIdempotencyKey(BOB, 'other', 'deploy-42', t)).toBeUndefined();
        expect(await store.findByIdempotencyKey(ALICE, 'echo', 'another-key', t)).toBeUndefined();
      });

      it('gives the key of an expired task to a new one', async () => {
        const first = await store.create(keyed({ ttlMs: 1_000 }));
        expect(await store.findByIdempotencyKey(ALICE, 'echo', 'deploy-42', t + 1_000)).toBeUndefined();
        const second = await store.create(keyed({ createdAt: t + 1_000, args: { other: true } }));
        expect(second.id).not.toBe(first.id);
        expect(await store.get(first.id, ALICE, t + 1_001)).toBe('expired');
        expect((await store.findByIdempotencyKey(ALICE, 'echo', 'deploy-42', t + 1_001))?.snapshot.id).toBe(
          second.id,
        );
      });

      it('makes concurrent creations with one key, here and on a second instance, one task', async () => {
        const peer = openPeer === undefined ? store : await openPeer();
        try {
          const created = await Promise.all(
            Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? store : peer).create(keyed())),
          );
          expect(new Set(created.map((c) => c.id)).size).toBe(1);
          expect(await store.countActive(ALICE)).toBe(1);
          expect(await store.countRunnable(t)).toBe(1);
        } finally {
          if (peer !== store) await peer.close();
        }
      });
    });

    describe('close', () => {
      it('resolves, and resolves again when called twice', async () => {
        await store.create(newTask());
        await expect(store.close()).resolves.toBeUndefined();
        await expect(store.close()).resolves.toBeUndefined();
      });
    });
  });
}
