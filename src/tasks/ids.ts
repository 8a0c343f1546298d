// Task ids: a prefix plus 192 bits from a CSPRNG; never sequential, never derived from input.
import { randomBytes } from 'node:crypto';

const PREFIX = 'task_';
const SHAPE = /^task_[A-Za-z0-9_-]{32}$/;

export const newTaskId = (): string => `${PREFIX}${randomBytes(24).toString('base64url')}`;

/** A malformed id is rejected before any lookup. */
export const isTaskIdShape = (id: string): boolean => SHAPE.test(id);
