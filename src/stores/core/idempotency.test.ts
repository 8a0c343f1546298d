// The idempotency decision: a free key, a live holder with the same arguments (join) or others (conflict), an
// expired holder (its key taken over); sealed arguments are opened only for a live holder.
import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError } from '../../tasks/errors.js';
import { decideKey, joinedTask, type KeyHolder } from './idempotency.js';

const open = (stored: string): string => stored;
const holder = (expiresAt: number | null, args: unknown = { a: 1, b: [2] }): KeyHolder => ({
  id: 't1',
  expiresAt,
  args: JSON.stringify(args),
});

describe('decideKey', () => {
  it('finds a key free when no task holds it', () => {
    expect(decideKey(undefined, {}, 10, open)).toEqual({ kind: 'free' });
  });

  it('joins a live holder created with the same arguments, in any key order, and conflicts with other ones', () => {
    expect(decideKey(holder(null), { b: [2], a: 1 }, 10, open)).toEqual({ kind: 'join', id: 't1' });
    expect(decideKey(holder(11), { a: 1, b: [2] }, 10, open)).toEqual({ kind: 'join', id: 't1' });
    expect(decideKey(holder(11), { a: 2, b: [2] }, 10, open)).toEqual({ kind: 'conflict', id: 't1' });
  });

  it('takes the key over from a holder that has expired, without opening its arguments', () => {
    const sealed = (): string => {
      throw new Error('opened');
    };
    expect(decideKey(holder(10, { other: true }), { a: 1 }, 10, sealed)).toEqual({
      kind: 'take-over',
      id: 't1',
    });
  });
});

describe('joinedTask', () => {
  it('answers the joined task, rejects a conflict, and answers nothing for a free or expired key', async () => {
    const read = (id: string) => ({ id });
    await expect(joinedTask({ kind: 'join', id: 't1' }, read)).resolves.toEqual({ id: 't1' });
    await expect(joinedTask({ kind: 'conflict', id: 't1' }, read)).rejects.toThrow(IdempotencyConflictError);
    await expect(joinedTask({ kind: 'free' }, read)).resolves.toBeUndefined();
    await expect(joinedTask({ kind: 'take-over', id: 't1' }, read)).resolves.toBeUndefined();
  });
});
