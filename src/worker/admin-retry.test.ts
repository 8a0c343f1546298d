// An operator's retry with a real worker on a SQLite file: a new task runs from the last finished step of the task
// retried (failed, or ended in a tool error), which stays as it ended.
import { describe, it } from 'vitest';
import { expectRetryFromLastStep, threeSteps } from '../../test/support/admin-retry.js';
import { newTask, now, openStore, useWorkerHarness, worker } from '../../test/support/worker-harness.js';

useWorkerHarness();

describe('an operator’s retry', () => {
  it('reruns a failed task from its last finished step: done steps are not run again', async () => {
    const store = openStore();
    worker({ store, runner: threeSteps });
    await expectRetryFromLastStep(store, newTask(), now);
  });

  it('reruns a task that ended in a tool error as a new task: done steps and answers are copied', async () => {
    const store = openStore();
    worker({ store, runner: threeSteps });
    await expectRetryFromLastStep(store, newTask(), now, 'tool_error');
  });
});
