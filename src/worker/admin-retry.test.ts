// An operator's retry with a real worker on a SQLite file: the failed task runs again from its last finished step.
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
});
