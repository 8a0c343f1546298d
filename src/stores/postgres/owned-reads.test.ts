// Coalesced owner reads: how reads asked for together become statements, bounded in size and number in flight, and
// that a read is never answered by a statement sent before it was asked for.
import { describe, expect, it } from 'vitest';
import type { Db, Params, Row } from './db.js';
import { createOwnedReads } from './owned-reads.js';
import type { Queries } from './queries.js';
import type { PackedOwnedRow } from './rows.js';

const q = { getOwned: 'getOwned', getOwnedMany: 'getOwnedMany' } as unknown as Queries;
const ALICE = { tenant: 'acme', principal: 'alice' };
const BOB = { tenant: 'acme', principal: 'bob' };

interface Sent {
  sql: string;
  params: Params;
  answer(rows: Row[]): void;
  fail(err: unknown): void;
}

/** A Db whose statements wait until the test answers them; `owned` decides which pairs have a row. */
function fakeDb(): { db: Db; sent: Sent[] } {
  const sent: Sent[] = [];
  const query = <R extends Row>(sql: string, params: Params = []): Promise<R[]> =>
    new Promise<R[]>((resolve, reject) => {
      sent.push({ sql, params, answer: (rows) => resolve(rows as R[]), fail: reject });
    });
  const db: Db = {
    query,
    queryRaw: query,
    tx: () => Promise.reject(new Error('no tx')),
    close: async () => {},
  };
  return { db, sent };
}

const packed = (id: string): PackedOwnedRow => ({ r: [id], result: null, error: null });

/** The rows getOwnedMany would return for `sent` when only `visible(id, principal)` pairs exist. */
function manyRows(s: Sent, visible: (id: string, principal: string) => boolean): Row[] {
  const [ids, , principals] = s.params as [string[], string[], string[]];
  return ids.flatMap((id, i) => (visible(id, principals[i]!) ? [{ ...packed(id), n: i + 1 }] : []));
}

const idOf = (row: PackedOwnedRow | undefined) => row?.r[0];

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesced owner reads on PostgreSQL', () => {
  it('sends a lone read as getOwned, and reads asked for in one turn as one getOwnedMany', async () => {
    const { db, sent } = fakeDb();
    const read = createOwnedReads(db, q);
    const lone = read('t1', ALICE);
    await settle();
    expect(sent.map((s) => [s.sql, s.params])).toEqual([['getOwned', ['t1', 'acme', 'alice']]]);
    sent[0]!.answer([packed('t1')]);
    expect(await lone).toEqual(packed('t1'));

    const reads = [read('t1', ALICE), read('t2', ALICE), read('t1', BOB), read('t3', ALICE)];
    await settle();
    expect(sent).toHaveLength(2);
    expect(sent[1]!.sql).toBe('getOwnedMany');
    expect(sent[1]!.params).toEqual([
      ['t1', 't2', 't1', 't3'],
      ['acme', 'acme', 'acme', 'acme'],
      ['alice', 'alice', 'bob', 'alice'],
    ]);
    // t1 is Alice's; t3 does not exist: Bob's read of t1 and the read of t3 find nothing alike.
    sent[1]!.answer(manyRows(sent[1]!, (id, principal) => id !== 't3' && principal === 'alice'));
    expect((await Promise.all(reads)).map(idOf)).toEqual(['t1', 't2', undefined, undefined]);
  });

  it('bounds the reads of one statement and the statements in flight', async () => {
    const { db, sent } = fakeDb();
    const read = createOwnedReads(db, q, { maxBatch: 10, maxInFlight: 2 });
    const first = Array.from({ length: 35 }, (_, i) => read(`t${i}`, ALICE));
    await settle();
    expect(sent.map((s) => (s.params[0] as string[]).length)).toEqual([10, 10]);
    sent[0]!.answer(manyRows(sent[0]!, () => true));
    await settle();
    expect(sent.map((s) => (s.params[0] as string[]).length)).toEqual([10, 10, 10]);
    sent[1]!.answer(manyRows(sent[1]!, () => true));
    sent[2]!.answer(manyRows(sent[2]!, () => true));
    await settle();
    expect(sent.map((s) => (s.params[0] as string[]).length)).toEqual([10, 10, 10, 5]);
    sent[3]!.answer(manyRows(sent[3]!, () => true));
    expect((await Promise.all(first)).map(idOf)).toEqual(Array.from({ length: 35 }, (_, i) => `t${i}`));
  });

  it('answers a read only from a statement sent after it was asked for', async () => {
    const { db, sent } = fakeDb();
    const read = createOwnedReads(db, q, { maxInFlight: 1 });
    const before = read('t1', ALICE);
    await settle();
    expect(sent).toHaveLength(1);
    // Asked for while the first statement is under way (say, after this caller's cancel committed): it waits for a
    // statement of its own instead of sharing the answer of one sent before.
    const after = read('t1', ALICE);
    await settle();
    expect(sent).toHaveLength(1);
    sent[0]!.answer([{ ...packed('t1'), state: 'old' }]);
    expect(await before).toMatchObject({ state: 'old' });
    await settle();
    expect(sent).toHaveLength(2);
    sent[1]!.answer([{ ...packed('t1'), state: 'new' }]);
    expect(await after).toMatchObject({ state: 'new' });
  });

  it('fails every read of a failed statement, and goes on with the next ones', async () => {
    const { db, sent } = fakeDb();
    const read = createOwnedReads(db, q);
    const failing = [read('t1', ALICE), read('t2', ALICE)];
    await settle();
    const unavailable = new Error('store unavailable');
    sent[0]!.fail(unavailable);
    for (const r of failing) await expect(r).rejects.toBe(unavailable);
    const next = read('t1', ALICE);
    await settle();
    sent[1]!.answer([packed('t1')]);
    expect(await next).toEqual(packed('t1'));
  });
});
