// An operator's retry with a real worker on PostgreSQL: a new task runs again from the last finished step of the task
// retried, and a worker of another instance (replica) claims it.
import { afterEach, describe, it } from 'vitest';
import { createWorker, type Worker } from '../../worker/worker.js';
import { expectRetryFromLastStep, threeSteps } from '../../../test/support/admin-retry.js';
import { withPostgres } from '../../../test/support/postgres.js';
import { usePostgresStores } from '../../../test/support/postgres-stores.js';
import { workerTask } from '../../../test/support/tasks.js';

await withPostgres('the PostgreSQL operators’ retry with a worker', () => {
  const { open, freshSchema } = usePostgresStores('dmcp_admin_worker');
  const workers: Worker[] = [];
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.stop(1_000);
  });

  describe('an operator’s retry', () => {
    it('reruns a failed task from its last finished step on another replica’s worker', async () => {
      const schema = freshSchema();
      const operator = open({ schema });
      const replica = open({ schema });
      const w = createWorker({ store: replica, runner: threeSteps, leaseMs: 500, pollMs: 20, now: Date.now });
      workers.push(w);
      w.start();
      await expectRetryFromLastStep(operator, workerTask(Date.now()), Date.now);
    });

    it('reruns a task that ended in a tool error as a new task on another replica’s worker', async () => {
      const schema = freshSchema();
      const operator = open({ schema });
      const replica = open({ schema });
      const w = createWorker({ store: replica, runner: threeSteps, leaseMs: 500, pollMs: 20, now: Date.now });
      workers.push(w);
      w.start();
      await expectRetryFromLastStep(operator, workerTask(Date.now()), Date.now, 'tool_error');
    });
  });
});
