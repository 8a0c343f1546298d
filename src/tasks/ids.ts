// Task ids: a prefix plus 192 bits from a CSPRNG; never sequential, never derived from input. A child task's id is
// derived from its parent's (childTaskId): as unguessable as the parent's, and owned by the same owner.
import { createHash, randomBytes } from 'node:crypto';

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

/**
 * The id of child task `name` of task `parentId` (ExecutionContext.child): the same for every run of the parent, so
 * that a run replayed after a crash finds the child an earlier run created. 192 bits of a SHA-256 of the parent's id
 * (itself 192 random bits) and the name: nobody who cannot see the parent can tell it.
 */
export const childTaskId = (parentId: string, name: string): string =>
  `${PREFIX}${createHash('sha256').update(`${parentId}\n${name}`).digest().toString('base64url', 0, 24)}`;
