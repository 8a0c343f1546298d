// A runnable task for worker tests: no TTL, replayed after a crash, owned by one principal.
import { newTaskId } from '../../src/tasks/ids.js';
import type { NewTask, TaskOwner } from '../../src/tasks/task.js';

export const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };

export function workerTask(createdAt: number, overrides: Partial<NewTask> = {}): NewTask {
  return {
    id: newTaskId(),
    owner: ALICE,
    tool: 'echo',
    args: {},
    createdAt,
    ttlMs: null,
    pollIntervalMs: undefined,
    statusMessage: undefined,
    replayAfterCrash: true,
    clientCapabilities: {},
    answers: {},
    ...overrides,
  };
}
