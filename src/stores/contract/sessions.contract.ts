// The TaskStore contract: Sessions of the 2025-11-25 wire and the answers to their open requests.
import { describe, expect, it } from 'vitest';
import { newTaskId } from '../../tasks/ids.js';
import { ALICE, BOB, OTHER_TENANT, type ContractStore } from './harness.contract.js';

export function sessionsContract(h: ContractStore): void {
  describe('sessions', () => {
    const sid = (): string => `s-${newTaskId()}`;

    it('keeps a session for its owner only, live until it expires', async (ctx) => {
      const sessions = h.store.sessions;
      if (sessions === undefined) return ctx.skip();
      const id = sid();
      const state = { protocolVersion: '2025-11-25', caps: { elicitation: {} }, n: 1 };
      await sessions.createSession({ id, owner: ALICE, state, createdAt: h.t, expiresAt: h.t + 1_000 });
      expect(await sessions.getSession(id, ALICE)).toEqual({
        id,
        owner: ALICE,
        state,
        createdAt: h.t,
        expiresAt: h.t + 1_000,
      });
      expect(await sessions.getSession(id, BOB)).toBeUndefined();
      expect(await sessions.getSession(id, OTHER_TENANT)).toBeUndefined();
      expect(await sessions.getSession(sid(), ALICE)).toBeUndefined();
      // Expired sessions are still known (their clients must hear that they ended) but no longer change.
      expect(await sessions.updateSession(id, ALICE, { state: { n: 2 } }, h.t + 1_000)).toBe(false);
      expect(await sessions.getSession(id, ALICE)).toMatchObject({ state, expiresAt: h.t + 1_000 });
    });

    it("counts the owner's live sessions only", async (ctx) => {
      const sessions = h.store.sessions;
      if (sessions === undefined) return ctx.skip();
      const open = (owner: typeof ALICE, expiresAt: number) =>
        sessions.createSession({ id: sid(), owner, state: {}, createdAt: h.t, expiresAt });
      const before = await sessions.countSessions(ALICE, h.t);
      const beforeLater = await sessions.countSessions(ALICE, h.t + 1_500);
      await open(ALICE, h.t + 1_000);
      await open(ALICE, h.t + 2_000);
      await open(BOB, h.t + 1_000);
      await open(OTHER_TENANT, h.t + 1_000);
      const ended = sid();
      await sessions.createSession({
        id: ended,
        owner: ALICE,
        state: {},
        createdAt: h.t,
        expiresAt: h.t + 1_000,
      });
      await sessions.endSession(ended, ALICE, h.t);
      expect(await sessions.countSessions(ALICE, h.t)).toBe(before + 2);
      // Expiry passes: no longer counted.
      expect(await sessions.countSessions(ALICE, h.t + 1_500)).toBe(beforeLater + 1);
    });

    it("updates state and expiry of the owner's live session only", async (ctx) => {
      const sessions = h.store.sessions;
      if (sessions === undefined) return ctx.skip();
      const id = sid();
      await sessions.createSession({
        id,
        owner: ALICE,
        state: { a: 1 },
        createdAt: h.t,
        expiresAt: h.t + 100,
      });
      expect(await sessions.updateSession(id, BOB, { state: { a: 2 } }, h.t + 1)).toBe(false);
      expect(await sessions.updateSession(id, ALICE, { expiresAt: h.t + 500 }, h.t + 50)).toBe(true);
      expect(await sessions.getSession(id, ALICE)).toMatchObject({ state: { a: 1 }, expiresAt: h.t + 500 });
      expect(await sessions.updateSession(id, ALICE, { state: { a: 3 } }, h.t + 200)).toBe(true);
      expect(await sessions.getSession(id, ALICE)).toMatchObject({ state: { a: 3 }, expiresAt: h.t + 500 });
      expect(await sessions.updateSession(sid(), ALICE, { state: { a: 5 } }, h.t)).toBe(false);
    });

    it('ends for the owner only, and purges what ended before a time', async (ctx) => {
      const sessions = h.store.sessions;
      if (sessions === undefined) return ctx.skip();
      const kept = sid();
      const stale = sid();
      await sessions.createSession({
        id: kept,
        owner: ALICE,
        state: {},
        createdAt: h.t,
        expiresAt: h.t + 10_000,
      });
      await sessions.createSession({
        id: stale,
        owner: ALICE,
        state: {},
        createdAt: h.t,
        expiresAt: h.t + 10,
      });
      expect(await sessions.endSession(kept, BOB, h.t + 5)).toBe(false);
      expect(await sessions.endSession(stale, ALICE, h.t + 20)).toBe(false);
      expect(await sessions.endSession(kept, ALICE, h.t + 20)).toBe(true);
      expect(await sessions.endSession(kept, ALICE, h.t + 21)).toBe(false);
      expect(await sessions.getSession(kept, ALICE)).toMatchObject({ expiresAt: h.t + 20 });
      expect(await sessions.updateSession(kept, ALICE, { expiresAt: h.t + 99_999 }, h.t + 21)).toBe(false);
      expect(await sessions.purgeSessions(h.t + 10)).toBeGreaterThanOrEqual(1);
      expect(await sessions.getSession(stale, ALICE)).toBeUndefined();
      expect(await sessions.getSession(kept, ALICE)).toBeDefined();
      expect(await sessions.purgeSessions(h.t + 20)).toBeGreaterThanOrEqual(1);
      expect(await sessions.getSession(kept, ALICE)).toBeUndefined();
    });

    it('keeps the answer to an open request for the process that asked it, once', async (ctx) => {
      const sessions = h.store.sessions;
      const requests = sessions?.requests;
      if (sessions === undefined || requests === undefined) return ctx.skip();
      const id = sid();
      const [asker, other] = [`o-${newTaskId()}`, `o-${newTaskId()}`];
      await sessions.createSession({ id, owner: ALICE, state: {}, createdAt: h.t, expiresAt: h.t + 10_000 });
      await requests.openRequest(id, 'srv-a', asker, h.t);
      await requests.openRequest(id, 'srv-b', other, h.t);
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
      const sessions = h.store.sessions;
      const requests = sessions?.requests;
      if (sessions === undefined || requests === undefined) return ctx.skip();
      const [gone, kept] = [sid(), sid()];
      const origin = `o-${newTaskId()}`;
      for (const [id, lifeMs] of [
        [gone, 10],
        [kept, 10_000],
      ] as const) {
        await sessions.createSession({
          id,
          owner: ALICE,
          state: {},
          createdAt: h.t,
          expiresAt: h.t + lifeMs,
        });
      }
      await requests.openRequest(gone, 'srv-1', origin, h.t + 5);
      await requests.openRequest(kept, 'srv-old', origin, h.t);
      await requests.openRequest(kept, 'srv-new', origin, h.t + 50);
      await sessions.purgeSessions(h.t + 20);
      const answer = (id: string) => ({ jsonrpc: '2.0', id, result: {} });
      expect(await requests.answerRequest(gone, 'srv-1', answer('srv-1'))).toBe(false);
      expect(await requests.answerRequest(kept, 'srv-old', answer('srv-old'))).toBe(false);
      expect(await requests.answerRequest(kept, 'srv-new', answer('srv-new'))).toBe(true);
      expect(await requests.answersFor(origin)).toEqual([
        { sessionId: kept, requestId: 'srv-new', message: answer('srv-new') },
      ]);
    });
  });
}
