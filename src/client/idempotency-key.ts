// Idempotency keys the client makes: UUIDv7 (RFC 9562), time-ordered, so a store's index of keys grows at its end.
import { randomBytes } from 'node:crypto';

/**
 * A new key: 48 bits of milliseconds, then 74 random bits. Keys made later sort later: a server's unique index of
 * keys takes each new one on its last page instead of a random page (random keys cost a page write each).
 */
export function newIdempotencyKey(now: number = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | ((bytes[6] as number) & 0x0f); // version 7
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f); // variant 10
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
