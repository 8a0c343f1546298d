// withCommitted: which changes carry the task as committed, and that its payloads are decoded only on demand.
import { describe, expect, it } from 'vitest';
import { withCommitted } from './context.js';
import type { SnapshotColumns } from './rows.js';

const CHANGE = { taskId: 'task_1', runnable: false, cancelRequested: false };
const row = (over: Partial<SnapshotColumns> = {}): SnapshotColumns => ({
  id: 'task_1',
  status: 'completed',
  status_message: null,
  created_at: '1700000000000',
  updated_at: '1700000000005',
  ttl_ms: '60000',
  poll_interval_ms: null,
  expires_at: '1700000060000',
  result: 'sealed:{"content":[]}',
  error: null,
  revision: '4',
  tool: 'echo',
  tool_version: null,
  attempt: 1,
  ...over,
});

describe('withCommitted', () => {
  it('decodes the payloads only when a subscriber asks for the snapshot, and once', () => {
    let opened = 0;
    const open = (s: string): string => {
      opened++;
      return s.replace(/^sealed:/, '');
    };
    const change = withCommitted(CHANGE, row(), open);
    expect(opened).toBe(0);
    expect(change.committed?.revision).toBe(4);
    expect(change.committed?.expiresAt).toBe(1_700_000_060_000);
    const first = change.committed?.snapshot();
    expect(first).toMatchObject({ status: 'completed', result: { content: [] }, revision: 4 });
    expect(change.committed?.snapshot()).toBe(first);
    expect(opened).toBe(1);
  });

  it('carries nothing for a task waiting for input or a row without its snapshot columns', () => {
    expect(withCommitted(CHANGE, row({ status: 'input_required' }), (s) => s)).toEqual(CHANGE);
    expect(withCommitted(CHANGE, { id: 'task_1' }, (s) => s)).toEqual(CHANGE);
    expect(withCommitted(CHANGE, undefined, (s) => s)).toEqual(CHANGE);
  });

  it('answers undefined when a payload cannot be opened', () => {
    const change = withCommitted(CHANGE, row(), () => {
      throw new Error('no key');
    });
    expect(change.committed?.snapshot()).toBeUndefined();
  });
});
