// The task layer's JSON-RPC codes are the wire's: a failed task read over the wire carries the code the wire means.
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../wire/codes.js';
import { TaskErrorCode } from './errors.js';

describe('TaskErrorCode', () => {
  it('names the same numbers as the wire code table', () => {
    for (const [name, code] of Object.entries(TaskErrorCode))
      expect(code, name).toBe(ErrorCode[name as keyof typeof ErrorCode]);
  });
});
