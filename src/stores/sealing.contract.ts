// Sealing at rest, for both stores: every value a client or a handler supplied is sealed when a cipher is set, and
// each sealed value opens only in the row and column it was written to. The stores' tests give raw access to their
// rows (`raw`): these checks read and move stored values behind the store's back, as someone with the database would.
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TaskStore } from '../tasks/store.js';
import type { TaskOwner } from '../tasks/task.js';
import type { SessionStore } from '../tasks/sessions.js';
import { newTask } from './task-store.contract.js';

const T0 = 1_700_000_000_000;
const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };

export interface RawAccess {
  /** Runs one statement with `?` placeholders (translated by the store's test). */
  exec(sql: string, params: unknown[]): Promise<void>;
  /** Every stored value of the store's tables, as text (whatever the column type). */
  dump(): Promise<string>;
  /** Another store on the same database (another process: nothing of the first one's memory). */
  reopen(): Promise<TaskStore>;
}

export interface SealingHarness {
  /** A store over a fresh database, sealing with `keyring` (`kid:base64[,…]`). */
  open(keyring: string): Promise<{ store: TaskStore & { sessions?: SessionStore }; raw: RawAccess }>;
}

const keyring = (id = 'k1'): string => `${id}:${randomBytes(32).toString('base64')}`;

/** A value sealed as releases before the row binding did: the additional data is the key id alone. */
function sealedUnbound(spec: string, plain: string): string {
  const [id, b64] = spec.split(':') as [string, string];
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', Buffer.from(b64, 'base64'), iv);
  cipher.setAAD(Buffer.from(id));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `enc1.${id}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

export function sealingContract(name: string, h: SealingHarness): void {
  describe(`sealing at rest: ${name}`, () => {
    it('binds each sealed value to its task and column: moved elsewhere, it no longer opens', async () => {
      const { store, raw } = await h.open(keyring());
      const a = await store.create(newTask({ args: { who: 'a' }, createdAt: T0 }));
      const b = await store.create(newTask({ args: { who: 'b' }, createdAt: T0 + 1 }));
      for (const [i, task] of [a, b].entries()) {
        const run = await store.claim('w', 60_000, T0 + 10);
        if (run === undefined) throw new Error('expected a claim');
        await store.saveStep(run.id, run.token, 's1', { step: 1 }, T0 + 10);
        await store.saveStep(run.id, run.token, 's2', { step: 2 }, T0 + 10);
        await store.finish(
          run.id,
          run.token,
          { kind: 'completed', result: { secret: `r${i}` } },
          T0 + 11 + i,
        );
        expect(task.id).toBeDefined();
      }
      await store.close();
      const before = await raw.reopen();
      await expect(before.get(b.id, ALICE, T0 + 20)).resolves.toMatchObject({ result: { secret: 'r1' } });
      await before.close();
      // Another task's sealed result copied into this row (as from another tenant's).
      await raw.exec('UPDATE tasks SET result = (SELECT result FROM tasks WHERE id = ?) WHERE id = ?', [
        a.id,
        b.id,
      ]);
      // The same task's arguments copied into its result column.
      await raw.exec('UPDATE tasks SET result = args WHERE id = ?', [a.id]);
      const after = await raw.reopen();
      await expect(after.get(b.id, ALICE, T0 + 20)).rejects.toThrow();
      await expect(after.get(a.id, ALICE, T0 + 20)).rejects.toThrow();
      await after.close();
    });

    it('binds steps to their names: two steps swapped do not replay as each other', async () => {
      const { store, raw } = await h.open(keyring());
      const task = await store.create(newTask({ createdAt: T0 }));
      const run = await store.claim('w', 1_000, T0 + 1);
      if (run === undefined) throw new Error('expected a claim');
      await store.saveStep(task.id, run.token, 's1', 'one', T0 + 1);
      await store.saveStep(task.id, run.token, 's2', 'two', T0 + 1);
      await raw.exec(
        `UPDATE task_steps SET value = (SELECT value FROM task_steps WHERE task_id = ? AND name = 's1')
         WHERE task_id = ? AND name = 's2'`,
        [task.id, task.id],
      );
      // The lease lapses; the next claim reads the steps to replay.
      await expect(store.claim('w2', 1_000, T0 + 5_000)).rejects.toThrow();
      await store.close();
    });

    it('keeps stream chunks sealed, each bound to its place: moved to another offset, it no longer opens', async () => {
      const { store, raw } = await h.open(keyring());
      const streams = store.streams;
      if (streams === undefined) throw new Error('expected a streams port');
      const canary = `CANARY${randomBytes(6).toString('hex')}`;
      const task = await store.create(newTask({ createdAt: T0 }));
      const run = await store.claim('w', 1_000, T0 + 1);
      if (run === undefined) throw new Error('expected a claim');
      const bounds = { maxChunks: 10, maxBytes: 1_000 };
      await streams.append(task.id, run.token, 'out', '/0', `${canary} one`, T0 + 1, bounds);
      await streams.append(task.id, run.token, 'out', '/1', `${canary} two`, T0 + 1, bounds);
      expect((await streams.read(task.id, 'out', 0, 10, 1_000)).chunks.map((c) => c.data)).toEqual([
        `${canary} one`,
        `${canary} two`,
      ]);
      expect(await raw.dump()).not.toContain(canary);
      await raw.exec(
        `UPDATE task_stream_chunks SET data = (SELECT data FROM task_stream_chunks WHERE task_id = ? AND seq = 0)
         WHERE task_id = ? AND seq = 1`,
        [task.id, task.id],
      );
      await expect(streams.read(task.id, 'out', 1, 10, 1_000)).rejects.toThrow();
      await store.close();
    });

    it('keeps status texts, copied errors, client capabilities, session state and relayed answers sealed', async () => {
      const { store, raw } = await h.open(keyring());
      const canary = `CANARY${randomBytes(6).toString('hex')}`;
      const task = await store.create(
        newTask({ createdAt: T0, clientCapabilities: { experimental: { c: { v: canary } } } }),
      );
      const run = await store.claim('w', 60_000, T0 + 1);
      if (run === undefined) throw new Error('expected a claim');
      expect(run.clientCapabilities).toEqual({ experimental: { c: { v: canary } } });
      // Progress too (its figures are the canary's digits).
      const figure = Number.parseInt(canary.slice(6), 16);
      await store.setStatusMessage(task.id, run.token, `working on ${canary}`, T0 + 2, { progress: figure });
      expect((await store.get(task.id, ALICE, T0 + 3)) as object).toMatchObject({
        statusMessage: `working on ${canary}`,
        progress: { progress: figure },
      });
      const error = { code: -32603, message: `failed on ${canary}` };
      await store.finish(
        task.id,
        run.token,
        { kind: 'failed', error, statusMessage: `Failed: ${canary}` },
        T0 + 4,
      );
      expect(await store.get(task.id, ALICE, T0 + 5)).toMatchObject({
        statusMessage: `Failed: ${canary}`,
        error,
      });
      // The status history keeps the messages as the task does: sealed, and read back open.
      const history = (await store.inspect?.(task.id, T0 + 5))?.history;
      expect(history?.at(-1)).toEqual({ at: T0 + 4, status: 'failed', statusMessage: `Failed: ${canary}` });
      const sessions = store.sessions;
      if (sessions !== undefined) {
        const state = { clientInfo: { name: canary }, subscriptions: [`file:///${canary}`] };
        await sessions.createSession({
          id: 's-1',
          owner: ALICE,
          state,
          createdAt: T0,
          expiresAt: T0 + 60_000,
        });
        await sessions.updateSession('s-1', ALICE, { state: { ...state, logLevel: 'info' } }, T0 + 1);
        expect((await sessions.getSession('s-1', ALICE))?.state).toEqual({ ...state, logLevel: 'info' });
        await sessions.requests?.openRequest('s-1', 'r-1', 'replica-a', T0);
        await sessions.requests?.answerRequest('s-1', 'r-1', {
          jsonrpc: '2.0',
          id: 'r-1',
          result: { canary },
        });
        expect(await sessions.requests?.answersFor('replica-a')).toMatchObject([
          { sessionId: 's-1', requestId: 'r-1', message: { result: { canary } } },
        ]);
      }
      expect(await raw.dump()).not.toContain(canary);
      expect(await raw.dump()).not.toContain(String(figure));
      await store.close();
    });

    it('keeps a concurrency key computed from a call as a keyed digest: the limit holds, the key is never stored', async () => {
      const { store, raw } = await h.open(keyring());
      if (store.freeSlots === undefined) return await store.close();
      const canary = `CUSTOMER${randomBytes(6).toString('hex')}`;
      const limited = { key: canary, limit: 1, derived: true };
      const first = await store.create(newTask({ createdAt: T0, concurrency: limited }));
      const second = await store.create(newTask({ createdAt: T0, concurrency: limited }));
      const other = await store.create(
        newTask({ createdAt: T0, concurrency: { ...limited, key: `${canary}-other` } }),
      );
      const claimed = [await store.claim('w', 60_000, T0 + 1), await store.claim('w', 60_000, T0 + 1)];
      // One per key: the second task of the first key waits, and its owner sees the digest, not the key.
      expect(claimed.map((c) => c?.id)).toEqual([first.id, other.id]);
      expect(await store.claim('w', 60_000, T0 + 1)).toBeUndefined();
      const waiting = await store.get(second.id, ALICE, T0 + 2);
      expect((waiting as { statusMessage?: string }).statusMessage).toMatch(
        /concurrency key "digest:[\w-]+"/,
      );
      expect(JSON.stringify(waiting)).not.toContain(canary);
      expect(await raw.dump()).not.toContain(canary);
      await store.close();
    });

    it('keeps a rate limit key computed from a call as a keyed digest: the rate holds, the key is never stored', async () => {
      const { store, raw } = await h.open(keyring());
      const canary = `CUSTOMER${randomBytes(6).toString('hex')}`;
      const rateLimit = { key: canary, limit: 1, periodMs: 60_000, derived: true };
      const first = await store.create(newTask({ createdAt: T0, rateLimit }));
      const second = await store.create(newTask({ createdAt: T0, rateLimit }));
      const other = await store.create(
        newTask({ createdAt: T0, rateLimit: { ...rateLimit, key: `${canary}-other` } }),
      );
      if ((await store.stats?.(T0))?.rateWaitsByTool === undefined) return await store.close();
      const claimed = [await store.claim('w', 60_000, T0 + 1), await store.claim('w', 60_000, T0 + 1)];
      // One start per key: the second task of the first key waits, and its owner sees the digest, not the key.
      expect(claimed.map((c) => c?.id)).toEqual([first.id, other.id]);
      expect(await store.claim('w', 60_000, T0 + 1)).toBeUndefined();
      const waiting = await store.get(second.id, ALICE, T0 + 2);
      expect((waiting as { statusMessage?: string }).statusMessage).toMatch(
        /rate limit of key "digest:[\w-]+"/,
      );
      expect(JSON.stringify(waiting)).not.toContain(canary);
      expect(await raw.dump()).not.toContain(canary);
      await store.close();
    });

    it('keeps a debounce key computed from a call as a keyed digest: calls join, the key is never stored', async () => {
      const { store, raw } = await h.open(keyring());
      const canary = `INBOX${randomBytes(6).toString('hex')}`;
      const debounce = { key: canary, periodMs: 5_000, derived: true, replace: true };
      const first = await store.create(newTask({ createdAt: T0, args: { n: 1 }, debounce }));
      const joined = await store.create(newTask({ createdAt: T0 + 1, args: { n: 1 }, debounce }));
      const replaced = await store.create(
        newTask({ createdAt: T0 + 2, args: { n: `${canary}-2` }, debounce }),
      );
      const other = await store.create(
        newTask({ createdAt: T0 + 3, args: { n: 1 }, debounce: { ...debounce, key: `${canary}-other` } }),
      );
      expect([joined.id, replaced.id]).toEqual([first.id, first.id]);
      expect(replaced.debounced).toBe('replaced');
      expect(other.id).not.toBe(first.id);
      const run = await store.claim('w', 60_000, T0 + 5_000);
      expect(run).toMatchObject({ id: first.id, args: { n: `${canary}-2` } });
      expect(await raw.dump()).not.toContain(canary);
      await store.close();
    });

    it('opens a task’s payloads for operators within their scope; one sealed with a missing key shows as sealed', async () => {
      const { store, raw } = await h.open(keyring());
      const admin = store.admin;
      if (admin?.payloads === undefined) throw new Error('expected the operators’ payloads');
      const task = await store.create(newTask({ args: { who: 'a' }, createdAt: T0 }));
      const first = await store.claim('w', 60_000, T0 + 1);
      if (first === undefined) throw new Error('expected a claim');
      const requests = { k1: { method: 'elicitation/create', message: 'Name?' } };
      await store.finish(task.id, first.token, { kind: 'input_required', requests }, T0 + 2);
      await store.answer(task.id, ALICE, { k1: { action: 'accept', content: { name: 'Ada' } } }, T0 + 3);
      const second = await store.claim('w', 60_000, T0 + 4);
      if (second === undefined) throw new Error('expected a claim');
      await store.finish(task.id, second.token, { kind: 'completed', result: { secret: 'r' } }, T0 + 5);
      const all = { tenants: 'all' } as const;
      expect(await admin.payloads(all, task.id, T0 + 6)).toEqual({
        arguments: { who: 'a' },
        inputs: [{ key: 'k1', request: requests.k1, answer: { action: 'accept', content: { name: 'Ada' } } }],
        result: { secret: 'r' },
      });
      expect(await admin.payloads({ tenants: ['globex'] }, task.id, T0 + 6)).toBeUndefined();
      expect(await admin.payloads(all, 'no-such-task', T0 + 6)).toBeUndefined();
      // A result sealed with a key this store does not hold (as after a key was dropped from the keyring).
      await raw.exec('UPDATE tasks SET result = ? WHERE id = ?', [
        sealedUnbound(keyring('gone'), '{"x":1}'),
        task.id,
      ]);
      expect(await admin.payloads(all, task.id, T0 + 7)).toMatchObject({
        arguments: { who: 'a' },
        result: { sealed: true },
      });
      await store.close();
    });

    it('finds sealed tool errors by outcome, and a retry seals the copied payloads for the new task', async () => {
      const { store, raw } = await h.open(keyring());
      const admin = store.admin;
      if (admin === undefined) throw new Error('expected the operators’ port');
      const canary = `CANARY${randomBytes(6).toString('hex')}`;
      const answers = { k: { action: 'accept', content: { who: canary } } };
      const caps = { experimental: { c: { v: canary } } };
      const task = await store.create(
        newTask({ args: { who: canary }, createdAt: T0, answers, clientCapabilities: caps }),
      );
      const run = await store.claim('w', 60_000, T0 + 1);
      if (run === undefined) throw new Error('expected a claim');
      await store.saveStep(task.id, run.token, 's1', { step: canary }, T0 + 1);
      const result = { content: [{ type: 'text', text: `broke on ${canary}` }], isError: true };
      await store.finish(task.id, run.token, { kind: 'completed', result }, T0 + 2);
      const all = { tenants: 'all' } as const;
      const found = await admin.list(all, { limit: 5, outcome: ['tool_error'] }, T0 + 3);
      expect(found.items.map((t) => [t.id, t.status, t.outcome])).toEqual([
        [task.id, 'completed', 'tool_error'],
      ]);
      // Sealed texts are not searched.
      expect((await admin.list(all, { limit: 5, errorText: canary }, T0 + 3)).items).toEqual([]);
      const retried = await admin.retry(all, task.id, T0 + 4);
      if (!retried.ok) throw new Error(`refused: ${retried.reason}`);
      const again = await store.claim('w', 60_000, T0 + 5);
      expect(again).toMatchObject({
        id: retried.taskId,
        args: { who: canary },
        clientCapabilities: caps,
        steps: { s1: { step: canary } },
        answers,
      });
      expect((await store.get(retried.taskId, ALICE, T0 + 5)) as object).toMatchObject({
        statusMessage: `An operator retried task ${task.id}: it runs again from its last finished step.`,
      });
      expect(await raw.dump()).not.toContain(canary);
      await store.close();
    });

    it('refuses to retry a task whose payloads are sealed with a key the store lacks', async () => {
      const { store, raw } = await h.open(keyring());
      const admin = store.admin;
      if (admin === undefined) throw new Error('expected the operators’ port');
      const task = await store.create(newTask({ createdAt: T0, ttlMs: 1_000 }));
      expect(await store.expire(T0 + 1_000)).toBe(1);
      await raw.exec('UPDATE tasks SET args = ? WHERE id = ?', [
        sealedUnbound(keyring('gone'), '{"x":1}'),
        task.id,
      ]);
      const all = { tenants: 'all' } as const;
      expect(await admin.retry(all, task.id, T0 + 2_000)).toEqual({ ok: false, reason: 'sealed' });
      expect((await admin.list(all, { limit: 5 }, T0 + 2_000)).items.map((t) => t.id)).toEqual([task.id]);
      await store.close();
    });

    it('opens values sealed before the row binding, wherever they are', async () => {
      const spec = keyring();
      const { store, raw } = await h.open(spec);
      const task = await store.create(newTask({ createdAt: T0 }));
      await raw.exec('UPDATE tasks SET args = ? WHERE id = ?', [
        sealedUnbound(spec, '{"old":"args"}'),
        task.id,
      ]);
      const run = await store.claim('w', 1_000, T0 + 1);
      expect(run?.args).toEqual({ old: 'args' });
      await store.close();
    });
  });
}
