// The order of a creation's quotas: active, stored, tenant-active, tenant-stored, then stored bytes; a quota without
// a limit is never counted, and one not counted (undefined) never refuses.
import { describe, expect, it } from 'vitest';
import { ActiveLimitError } from '../../tasks/errors.js';
import type { EncodedTask } from '../encode-task.js';
import { creationOver } from './quota.js';

const task = (limits: Partial<EncodedTask>): EncodedTask =>
  ({
    args: '{}',
    answers: [],
    activeLimit: null,
    storedLimit: null,
    tenantActiveLimit: null,
    tenantStoredLimit: null,
    storedBytesLimit: null,
    ...limits,
  }) as EncodedTask;

const all = { active: () => 5, stored: () => 5, 'tenant-active': () => 5, 'tenant-stored': () => 5 };

describe('creationOver', () => {
  it('refuses by the first quota reached, in order', () => {
    const limits = { activeLimit: 9, storedLimit: 5, tenantActiveLimit: 5, tenantStoredLimit: 5 };
    expect(creationOver(task(limits), all)).toEqual(new ActiveLimitError(5, 'stored'));
    expect(creationOver(task({ ...limits, storedLimit: 6 }), all)?.quota).toBe('tenant-active');
    expect(creationOver(task({ tenantStoredLimit: 5, storedBytesLimit: 1 }), all)?.quota).toBe(
      'tenant-stored',
    );
  });

  it('counts only the quotas the task has a limit of, and the bytes last', () => {
    const counted: string[] = [];
    const held = Object.fromEntries(
      ['active', 'stored', 'tenant-active', 'tenant-stored', 'stored-bytes'].map((q) => [
        q,
        () => {
          counted.push(q);
          return q === 'stored-bytes' ? 10 : 0;
        },
      ]),
    );
    const over = creationOver(task({ storedLimit: 1, storedBytesLimit: 11 }), held);
    expect(over).toEqual(new ActiveLimitError(11, 'stored-bytes'));
    expect(counted).toEqual(['stored', 'stored-bytes']);
  });

  it('lets a task through when what a quota holds is not counted here', () => {
    expect(creationOver(task({ activeLimit: 1, storedBytesLimit: 0 }), {})).toBeUndefined();
  });
});
