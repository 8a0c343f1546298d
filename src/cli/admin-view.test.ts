import { describe, expect, it } from 'vitest';
import { describeInspection } from './commands/task-inspect.js';
import { inspectionOf, shorten, shortTime, taskTable } from './admin-view.js';

describe('the admin views', () => {
  it('shortens one-line texts and times to the second', () => {
    expect(shorten('a\n  b', 10)).toBe('a b');
    expect(shorten('abcdefghijk', 5)).toBe('abcd…');
    expect(shortTime('2026-01-31T12:00:00.123Z')).toBe('2026-01-31 12:00:00');
    expect(shortTime('later')).toBe('later');
    expect(shortTime(undefined)).toBe('-');
  });

  it('a table has a header, padded columns and no trailing blanks', () => {
    expect(taskTable([])).toBe('no tasks match');
    const rows = taskTable([
      { id: 't1', tenant: 'a', principal: 'p', tool: 'x', status: 'working', createdAt: '', updatedAt: '', attempt: 1 },
    ]); // prettier-ignore
    expect(rows.split('\n')).toEqual([
      'ID  STATUS   TOOL  OWNER  CREATED  UPDATED  ATTEMPT  ERROR',
      't1  working  x     a/p    -        -        1',
    ]);
  });

  it('a detail with only some fields still prints', () => {
    const view = describeInspection(inspectionOf({ id: 't1', status: 'working', steps: [{ name: 's' }] }));
    expect(view).toContain('t1: working\n  tool -, owner -/-');
    expect(view).toContain('  created -, updated -, expires -');
    expect(view).toContain('  steps:\n    s: not done');
  });
});
