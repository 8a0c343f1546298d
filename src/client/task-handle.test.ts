import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../wire/codes.js';
import type { JsonObject } from '../wire/jsonrpc.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { TaskHandle, type TaskClient } from './task-handle.js';

/** A client whose server has no push: its task works for `polls` tasks/get (a new status text each), then completes. */
function pollingOnly(polls: number): TaskClient & { gets: number } {
  const client = {
    gets: 0,
    onInput: undefined,
    journalUpdate: () => undefined,
    async request(method: string): Promise<JsonObject> {
      if (method === 'subscriptions/listen') throw new ProtocolError(ErrorCode.MethodNotFound, 'no listen');
      client.gets++;
      return client.gets < polls
        ? { taskId: 't1', status: 'working', statusMessage: `step ${client.gets}`, pollIntervalMs: 1 }
        : { taskId: 't1', status: 'completed', result: { content: [] } };
    },
  };
  return client;
}

describe('following a task', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => void warnings.push(w);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => void process.off('warning', onWarning));

  it.each([{ poll: false }, { poll: true }])(
    'polls 40 times with one caller signal and adds no listener that outlives its wait (%o)',
    async ({ poll }) => {
      const client = pollingOnly(40);
      const caller = new AbortController();
      const outcome = await new TaskHandle(client, 't1').result({ signal: caller.signal, poll });
      expect(outcome.status).toBe('completed');
      expect(client.gets).toBe(40);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    },
  );
});
