// Ending a run: each outcome is one statement fenced by the run's token (the first terminal write wins).
import type { RunOutcome } from '../../tasks/task.js';
import { writeAndNotify, type StoreContext } from './context.js';

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
  ) => writeAndNotify(ctx, q.terminal, [id, token, status, result, error, message, now, failure], settled);
  switch (outcome.kind) {
    case 'completed': {
      const seal = await ctx.codec.sealerOf(id);
      const failure = outcome.failure === undefined ? null : seal(JSON.stringify(outcome.failure));
      const result = seal(JSON.stringify(outcome.result));
      return terminal('completed', result, null, outcome.statusMessage ?? null, failure);
    }
    case 'failed': {
      const seal = await ctx.codec.sealerOf(id);
      const failure = outcome.failure === undefined ? null : seal(JSON.stringify(outcome.failure));
      return terminal('failed', null, seal(JSON.stringify(outcome.error)), outcome.statusMessage, failure);
    }
    case 'waiting':
      return writeAndNotify(ctx, q.wait, [id, token, outcome.until, outcome.statusMessage, now], settled);
    case 'cancelled':
      return terminal('cancelled', null, null, 'Task was cancelled.');
    case 'released':
      return writeAndNotify(ctx, q.release, [id, token], { ...settled, runnable: true });
    case 'input_required': {
      const seal = await ctx.codec.sealerOf(id);
      const keys = Object.keys(outcome.requests);
      const requests = Object.values(outcome.requests).map((r) => seal(JSON.stringify(r)));
      const params = [id, token, outcome.statusMessage ?? null, now, keys, requests];
      return writeAndNotify(ctx, q.suspend, params, settled);
    }
  }
}
