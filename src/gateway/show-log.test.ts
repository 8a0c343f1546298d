import { describe, expect, it } from 'vitest';
import type { HandlerContext } from '../protocol/tool-types.js';
import { MAX_LOG_STATUS_CHARS, showLog } from './show-log.js';

/** A context that records what showLog did with it. */
function context(taskId: string | undefined) {
  const logs: unknown[][] = [];
  const statuses: string[] = [];
  const ctx = {
    taskId,
    log: (...args: unknown[]) => logs.push(args),
    status: async (message: string) => {
      statuses.push(message);
    },
  } as unknown as HandlerContext;
  return { ctx, logs, statuses };
}

describe('showLog', () => {
  it("passes the message on at the upstream's level, and shows it as a task's status, bounded", () => {
    const { ctx, logs, statuses } = context('t1');
    showLog(ctx, 'warning', 'disk almost full', 'fs');
    showLog(ctx, 'info', { step: 'copy', files: 3 }, undefined);
    showLog(ctx, 'info', 'y'.repeat(MAX_LOG_STATUS_CHARS + 10), undefined);
    expect(logs[0]).toEqual(['warning', 'disk almost full', 'fs']);
    expect(statuses[0]).toBe('disk almost full');
    expect(statuses[1]).toBe('{"step":"copy","files":3}');
    expect(statuses[2]).toHaveLength(MAX_LOG_STATUS_CHARS);
    expect(statuses[2]?.endsWith('…')).toBe(true);
  });

  it('shows no debug message and no empty one as status; an unknown level counts as info', () => {
    const { ctx, logs, statuses } = context('t1');
    showLog(ctx, 'debug', 'noise', undefined);
    showLog(ctx, 'info', '   ', undefined);
    showLog(ctx, 'verbose', 'odd level', undefined);
    expect(statuses).toEqual(['odd level']);
    expect(logs.map((l) => l[0])).toEqual(['debug', 'info', 'info']);
  });

  it('sets no status outside a task', () => {
    const { ctx, logs, statuses } = context(undefined);
    showLog(ctx, 'error', 'failed once', undefined);
    expect(logs).toHaveLength(1);
    expect(statuses).toEqual([]);
  });
});
