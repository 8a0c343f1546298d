// The payloads of change notifications: an instance's own come back and are dropped before parsing, others parse.
import { describe, expect, it } from 'vitest';
import { parseNotification } from './change-feed.js';

/** A payload as PostgreSQL's json_build_object writes it (sql/fragments.ts, notifier). */
const payload = (origin: string, taskId: string): string =>
  `{"origin" : "${origin}", "taskId" : "${taskId}", "runnable" : true, "cancelRequested" : false}`;

describe('change notification payloads', () => {
  it('drops the instance’s own, as PostgreSQL writes them or otherwise', () => {
    expect(parseNotification(payload('ab12', 't1'), 'ab12')).toBeUndefined();
    const compact = JSON.stringify({ origin: 'ab12', taskId: 't1', runnable: true, cancelRequested: false });
    expect(parseNotification(compact, 'ab12')).toBeUndefined();
  });

  it('parses another instance’s, whose origin only begins like ours', () => {
    expect(parseNotification(payload('ab123', 't1'), 'ab12')).toEqual({
      taskId: 't1',
      runnable: true,
      cancelRequested: false,
    });
    expect(parseNotification('not json', 'ab12')).toBeUndefined();
  });
});
