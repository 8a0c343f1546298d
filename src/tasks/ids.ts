// Task ids: a prefix plus 192 bits from a CSPRNG; never sequential, never derived from input.
import { randomBytes } from 'node:crypto';

const PREFIX = 'task_';
const SHAPE = /^task_[A-Za-z0-9_-]{32}$/;

// Random bytes are drawn from the CSPRNG in blocks; each id still takes 24 fresh bytes of its own.
const BLOCK = 24 * 256;
let pool = Buffer.alloc(0);
let offset = BLOCK;

export const newTaskId = (): string => {
  if (offset + 24 > pool.length) {
    pool = randomBytes(BLOCK);
    offset = 0;
  }
  const id = `${PREFIX}${pool.toString('base64url', offset, offset + 24)}`;
  offset += 24;
  return id;
};

/** A malformed id is rejected before any lookup. */
export const isTaskIdShape = (id: string): boolean => SHAPE.test(id);
