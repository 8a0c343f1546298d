// Cursor pagination over a deterministic list.
import { invalidParams } from '../wire/protocol-error.js';

export function paginate<T>(
  items: readonly T[],
  cursor: unknown,
  pageSize: number,
): { page: T[]; nextCursor?: string } {
  let start = 0;
  if (cursor !== undefined) {
    if (typeof cursor !== 'string') throw invalidParams('Invalid params: cursor must be a string');
    const m = /^o(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (m === null || Buffer.from(`o${m[1]}`, 'utf8').toString('base64url') !== cursor) {
      throw invalidParams('Invalid params: invalid cursor');
    }
    start = Number(m[1]);
    if (start > items.length) throw invalidParams('Invalid params: invalid cursor');
  }
  const end = start + pageSize;
  const page = items.slice(start, end);
  return end < items.length
    ? { page, nextCursor: Buffer.from(`o${end}`, 'utf8').toString('base64url') }
    : { page };
}
