// The owner's writes: answers to input requests and cancellation, each one write transaction that reads the task
// and changes it, so nothing else writes in between.
import type { AnswerResult, CancelResult, TaskStore } from '../../tasks/store.js';
import { isTerminal } from '../../tasks/task.js';
import { lookup, type StoreContext } from './context.js';
import { cancelChildren, childEnded } from './children.js';

export function ownerWrites(ctx: StoreContext): Pick<TaskStore, 'answer' | 'requestCancel'> {
  const { q, log, writes } = ctx;
  return {
    async answer(id, owner, responses, now): Promise<AnswerResult> {
      return writes.tx((): AnswerResult => {
        const row = lookup(ctx, id, owner, now);
        if (typeof row === 'string') return { ok: false, miss: row };
        if (row.status !== 'input_required') return { ok: true, resumed: false };
        let answered = 0;
        for (const [key, value] of Object.entries(responses))
          answered += q.answerInput(id, key, JSON.stringify(value), now);
        if (answered === 0) return { ok: true, resumed: false };
        const resumed = q.outstandingInputs(id).length === 0;
        q.touchAfterAnswer(id, owner, resumed, now);
        log.changed({ taskId: id, runnable: resumed, cancelRequested: false });
        return { ok: true, resumed };
      });
    },

    async requestCancel(id, owner, now): Promise<CancelResult> {
      return writes.tx((): CancelResult => {
        const row = lookup(ctx, id, owner, now);
        if (typeof row === 'string') return { ok: false, miss: row };
        if (isTerminal(row.status)) {
          return { ok: true, cancelledNow: false, running: false };
        }
        const running = row.lease_owner !== null && (row.lease_until ?? 0) > now;
        log.changed({ taskId: id, runnable: false, cancelRequested: true });
        cancelChildren(ctx, id, now);
        if (running) {
          q.flagCancel(id);
          return { ok: true, cancelledNow: false, running: true };
        }
        q.cancelNow(id, now);
        childEnded(ctx, id, now);
        return { ok: true, cancelledNow: true, running: false };
      });
    },
  };
}
