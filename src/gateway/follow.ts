// Following a task the upstream answered a call with, within the gateway task's run: its status messages become the
// gateway task's, its input requests the gateway task's input (sent upstream with tasks/update once the caller has
// answered), its end the gateway task's end. The upstream task's id is the recorded answer of the call's step, so a
// replay (after input, a crash, on another replica) follows the same task; a cancel of the gateway task cancels it.
import type { HandlerContext } from '../protocol/tool-types.js';
import type { CallToolResult, JsonObject } from '../protocol/types.js';
import { ErrorCode } from '../wire/codes.js';
import { ProtocolError } from '../wire/protocol-error.js';
import type { InputKeys } from './input-keys.js';
import {
  callResultOf,
  UpstreamRefusedError,
  UpstreamTaskLostError,
  type Upstream,
  type UpstreamTaskCreated,
  type UpstreamTaskOutcome,
} from './upstream.js';

/**
 * The reason a task's run is stopped with when the task is cancelled (the worker's AbortReason): only then is the
 * upstream task cancelled too. A run stopped by a shutdown or a lost lease leaves it running, for the replay that
 * follows it again.
 */
const CANCELLED = 'cancel';

/** The gateway task's status message after an update of the upstream task (`shown`: the one it set last). */
function showStatus(ctx: HandlerContext, task: JsonObject, shown: string | undefined): string | undefined {
  const message = task.statusMessage;
  if (task.status !== 'working' || typeof message !== 'string' || message === shown) return shown;
  // Best effort, as progress is: a run that lost its store or lease ends by itself.
  ctx.status(message).catch(() => undefined);
  return message;
}

/** The gateway's result for how the upstream task ended, or the error it ends with. */
function endOf(outcome: UpstreamTaskOutcome, tool: string, taskId: string): CallToolResult {
  if (outcome.status === 'completed') return callResultOf(outcome.result);
  if (outcome.status === 'failed') {
    const { code, message, data } = outcome.error;
    throw new UpstreamRefusedError(code, message, data);
  }
  throw new ProtocolError(ErrorCode.InternalError, 'the upstream cancelled its task', {
    outcome: 'cancelled',
    tool,
    upstreamTaskId: taskId,
  });
}

export async function followUpstreamTask(
  upstream: Upstream,
  tool: string,
  created: UpstreamTaskCreated,
  ctx: HandlerContext,
  keys: InputKeys,
): Promise<CallToolResult> {
  const { taskId } = created;
  if (upstream.followTask === undefined)
    throw new UpstreamTaskLostError(taskId, 'the connection to the upstream cannot follow its tasks');
  const phase = keys.phase();
  let shown: string | undefined;
  try {
    const owner = { tenant: ctx.auth.tenant, principal: ctx.auth.principal };
    const outcome = await upstream.followTask(taskId, {
      signal: ctx.signal,
      owner,
      created,
      onUpdate: (task) => (shown = showStatus(ctx, task, shown)),
      onInput: (requests) => phase.answer(ctx, requests),
    });
    return endOf(outcome, tool, taskId);
  } catch (err) {
    if (ctx.signal.aborted && ctx.signal.reason === CANCELLED)
      // Best effort: the upstream's own TTL ends a task it was not told of.
      await upstream
        .cancelTask?.(taskId, { tenant: ctx.auth.tenant, principal: ctx.auth.principal }, created)
        .catch(() => undefined);
    throw err;
  }
}
