// Ending a run: each outcome is one statement fenced by the run's token (the first terminal write wins).
import { isToolErrorResult, type RunOutcome } from '../../tasks/task.js';
import { withCommitted, writeAndNotify, type StoreContext } from './context.js';
import type { SnapshotColumns } from './rows.js';
import { errorOutcomeOf } from '../../tasks/error-outcome.js';
import { sealedAt, statusFor } from '../payload-sealing.js';
import type { Sealer } from './codec.js';

export async function finishRun(
  ctx: StoreContext,
  id: string,
  token: number,
  outcome: RunOutcome,
  now: number,
): Promise<boolean> {
  const { q } = ctx;
  const settled = { taskId: id, runnable: false, cancelRequested: false };
  const terminal = async (
    status: string,
    result: string | null,
    error: string | null,
    message: string | null,
    failure: string | null = null,
    toolError = false,
    errorOutcome: string | null = null,
  ) =>
    writeAndNotify(
      ctx,
      q.terminal,
      [id, token, status, result, error, message, now, failure, toolError, errorOutcome],
      settled,
    );
  const failureOf = (seal: Sealer): string | null =>
    'failure' in outcome && outcome.failure !== undefined
      ? seal(JSON.stringify(outcome.failure), sealedAt('tasks.failure', id))
      : null;
  switch (outcome.kind) {
    case 'completed': {
      const seal = await ctx.codec.sealerOf(id);
      const result = seal(JSON.stringify(outcome.result), sealedAt('tasks.result', id));
      const message = statusFor(seal, id, outcome.statusMessage);
      // Known here, before the result is sealed: operators find tool errors without opening results.
      return terminal('completed', result, null, message, failureOf(seal), isToolErrorResult(outcome.result));
    }
    case 'failed': {
      const seal = await ctx.codec.sealerOf(id);
      const error = seal(JSON.stringify(outcome.error), sealedAt('tasks.error', id));
      // Known here, before the error is sealed: operators find outcome-unknown calls without opening errors.
      const word = errorOutcomeOf(outcome.error);
      return terminal(
        'failed',
        null,
        error,
        statusFor(seal, id, outcome.statusMessage),
        failureOf(seal),
        false,
        word,
      );
    }
    case 'waiting':
      return endWaiting(ctx, id, token, outcome, now);
    case 'cancelled':
      return terminal('cancelled', null, null, 'Task was cancelled.');
    case 'released':
      return writeAndNotify(ctx, q.release, [id, token], { ...settled, runnable: true });
    case 'input_required': {
      const seal = await ctx.codec.sealerOf(id);
      const keys = Object.keys(outcome.requests);
      const requests = keys.map((k) =>
        seal(JSON.stringify(outcome.requests[k]), sealedAt('task_inputs.request', id, k)),
      );
      const params = [id, token, statusFor(seal, id, outcome.statusMessage), now, keys, requests];
      return writeAndNotify(ctx, q.suspend, params, settled);
    }
  }
}

/**
 * Ends the run waiting until `outcome.until`; a wait that an event arrived for during the run is due at once
 * (sql/endings.ts), and its change says it is runnable, for this process's workers too.
 */
async function endWaiting(
  ctx: StoreContext,
  id: string,
  token: number,
  outcome: Extract<RunOutcome, { kind: 'waiting' }>,
  now: number,
): Promise<boolean> {
  const message = statusFor(await ctx.codec.sealerOf(id), id, outcome.statusMessage);
  const params = [id, token, outcome.until, message, now];
  const [row] = await ctx.db.query<Partial<SnapshotColumns>>(ctx.q.wait, params);
  if (row === undefined) return false;
  const due = row.wake_at !== null && row.wake_at !== undefined && Number(row.wake_at) <= now;
  const change = { taskId: id, runnable: due, cancelRequested: false };
  ctx.feed.emitLocal([withCommitted(change, row, ctx.codec.open)]);
  return true;
}
