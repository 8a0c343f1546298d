import { describe, expect, it } from 'vitest';
import { describeInspection } from './commands/task-inspect.js';
import { describeFlow, inspectionOf, shorten, shortTime, taskTable } from './admin-view.js';

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
      { id: 't2', tenant: 'a', principal: 'p', tool: 'x', status: 'completed', outcome: 'tool_error', createdAt: '', updatedAt: '', attempt: 1 },
    ]); // prettier-ignore
    expect(rows.split('\n')).toEqual([
      'ID  STATUS     OUTCOME     TOOL  OWNER  CREATED  UPDATED  ATTEMPT  ERROR',
      't1  working    -           x     a/p    -        -        1',
      't2  completed  tool_error  x     a/p    -        -        1',
    ]);
  });

  it("a detail shows the task's trace id, escaped as every field a server answers", () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    expect(describeInspection(inspectionOf({ id: 't1', status: 'working', traceId }))).toContain(
      `\n  trace ${traceId}`,
    );
    const forged = describeInspection(
      inspectionOf({ id: 't1', status: 'working', traceId: 'x\n\u001b[2Jt9: forged' }),
    );
    expect(forged).not.toMatch(/^t9: forged/m);
    expect(forged).not.toContain('\u001b');
    expect(describeInspection(inspectionOf({ id: 't1', status: 'working' }))).not.toContain('trace');
  });

  it('a detail names the parent of a child task and the children of a parent, escaped', () => {
    const child = describeInspection(inspectionOf({ id: 't2', status: 'working', parentId: 't1' }));
    expect(child).toContain('\n  child task of t1');
    const parent = describeInspection(
      inspectionOf({
        id: 't1',
        status: 'working',
        children: [
          { id: 't2', tool: 'leaf', status: 'completed' },
          { id: 't3', tool: 'le\u001baf', status: 'working' },
        ],
      }),
    );
    expect(parent).toContain('\n  child tasks:\n    t2 leaf: completed\n    t3 le');
    expect(parent).not.toContain('\u001b');
  });

  it('a detail names a tool error, the task a retry came from and the retries made of it', () => {
    const view = describeInspection(
      inspectionOf({
        id: 't2',
        status: 'completed',
        outcome: 'tool_error',
        retryOf: 't1',
        retries: ['t3', 't4'],
      }),
    );
    expect(view).toContain('t2: completed (tool error)\n');
    expect(view).toContain('  retry of t1\n  retried as t3, t4');
    expect(describeInspection(inspectionOf({ id: 't1', status: 'failed', outcome: 'failed' }))).toMatch(
      /^t1: failed\n/,
    );
  });

  it('a detail with only some fields still prints', () => {
    const view = describeInspection(inspectionOf({ id: 't1', status: 'working', steps: [{ name: 's' }] }));
    expect(view).toContain('t1: working\n  tool -, owner -/-');
    expect(view).toContain('  created -, updated -, expires -');
    expect(view).toContain('  steps:\n    s: not done');
  });
});

describe("a task's story", () => {
  const detail = {
    id: 't1',
    status: 'completed',
    createdAt: '2026-01-31T12:00:01.234Z',
    steps: [
      { name: 'a', done: true, startedAt: '2026-01-31T12:00:01.300Z', savedAt: '2026-01-31T12:00:01.312Z' },
      { name: 'b', done: true },
    ],
    history: [
      { at: '2026-01-31T12:00:01.234Z', status: 'working', statusMessage: 'Queued.' },
      { at: '2026-01-31T12:00:02.000Z', status: 'input_required', statusMessage: 'waiting for approval' },
      { at: '2026-02-01T09:30:00.000Z', status: 'working' },
      { at: '2026-02-01T09:30:00.050Z', status: 'completed' },
    ],
  };

  it('prints the statuses on a timeline, the date again when the day changes, and step durations', () => {
    const view = describeInspection(inspectionOf(detail));
    expect(view).toContain(
      [
        '  history (UTC):',
        '    12:00:01.234 working: Queued.',
        '    12:00:02.000 input_required: waiting for approval',
        '    2026-02-01 09:30:00.000 working',
        '    09:30:00.050 completed',
      ].join('\n'),
    );
    expect(view).toContain('    a: done in 12 ms (started 12:00:01.300)\n    b: done (time unknown)');
  });

  it('says where a history starts when it does not begin with the creation, and when there is none', () => {
    const later = { ...detail, history: detail.history.slice(2) };
    expect(describeInspection(inspectionOf(later))).toContain(
      '  history (UTC) starts at 2026-02-01T09:30:00.000Z:\n    2026-02-01 09:30:00.000 working',
    );
    expect(describeInspection(inspectionOf({ ...detail, history: [] }))).toContain(
      '  history: none recorded (the task predates it)',
    );
    expect(describeInspection(inspectionOf({ ...detail, history: undefined }))).not.toContain('history');
  });
});

describe('the flow view', () => {
  it('tables the keys at their limit and the pauses, each cell one escaped line', () => {
    const text = describeFlow({
      keys: [{ key: 'pay\u001b[31mments', limit: 2, slotsHeld: 2, parked: 7 }],
      limited: true,
      pauses: [{ kind: 'tool', name: 'send\ninvoice', pausedAt: '2026-01-31T12:00:00.000Z', pausedTasks: 3 }],
    });
    expect(text.split('\n')).toEqual([
      'KEY                 LIMIT  HELD  WAITING',
      'pay\\u001b[31mments  2      2     7',
      '(more keys have tasks waiting: raise --max to see them)',
      '',
      'PAUSED  NAME           TENANT  SINCE                TASKS',
      'tool    send\\ninvoice  (all)   2026-01-31 12:00:00  3',
    ]);
    expect(describeFlow({ keys: [], pauses: [] })).toBe(
      'no concurrency key has tasks waiting for a slot\n\nnothing is paused',
    );
  });
});
