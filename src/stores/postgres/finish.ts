// Ending a run: each outcome is one statement fenced by the run's token (the first terminal write wins).
import { isToolErrorResult, type RunOutcome } from '../../tasks/task.js';
import type { TaskChange } from '../../tasks/store.js';
import { withCommitted, writeAndNotify, type StoreContext } from './context.js';
import { parentChange, type ParentWoken } from './children.js';
import type { SnapshotColumns } from './rows.js';
import { errorOutcomeOf } from '../../tasks/error-outcome.js';
import { sealedAt, statusFor } from '../payload-sealing.js';
import type { Sealer } from './codec.js';

/** A terminal ending, with the change of a parent it made due (a child task ended: its wait is over). */
async function endTerminal(ctx: StoreContext, settled: TaskChange, params: unknown[]): Promise<boolean> {
  const [row] = await ctx.db.query<Partial<SnapshotColumns> & ParentWoken>(ctx.q.terminal, params);
  if (row === undefined) return false;
  ctx.feed.emitLocal([withCommitted(settled, row, ctx.codec.open), ...parentChange(row)]);
  return true;
}

/** A wait begun: due at once when a child ended during the run, and then the change says the task is runnable. */
async function beginWait(ctx: StoreContext, settled: TaskChange, params: unknown[]): Promise<boolean> {
  const [row] = await ctx.db.query<Partial<SnapshotColumns> & ParentWoken & { due: boolean }>(
    ctx.q.wait,
    params,
  );
  if (row === undefined) return false;
  const change = withCommitted({ ...settled, runnable: row.due }, row, ctx.codec.open);
  ctx.feed.emitLocal([change, ...parentChange(row)]);
  return true;
}

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
    endTerminal(ctx, settled, [
      id,
      token,
      status,
      result,
      error,
      message,
      now,
      failure,
      toolError,
      errorOutcome,
    ]);
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
    case 'waiting': {
      const message = statusFor(await ctx.codec.sealerOf(id), id, outcome.statusMessage);
      return beginWait(ctx, settled, [id, token, outcome.until, message, now]);
    }
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
      const [row] = await ctx.db.query<ParentWoken>(q.suspend, params);
      if (row === undefined) return false;
      ctx.feed.emitLocal([settled, ...parentChange(row)]);
      return true;
    }
  }
}
