// resumeAll: the calls the journal kept as pending sent again, handles for every unfinished task (with the label,
// tool and arguments of the call that created it), and a report of each call that could not be sent again.
import type { JsonObject } from '../wire/jsonrpc.js';
import { resendCall, type ToolCallDeps } from './call-tool.js';
import type { JournalEntry, PendingCall } from './journal.js';
import { neverSent } from './retry.js';
import { TaskHandle, type TaskClient } from './task-handle.js';

/** A call `resumeAll()` could not send again, or that the server refused. */
export interface ResumeFailure {
  /** The call as the journal kept it: idempotency key, label, tool and arguments. */
  call: PendingCall;
  /** The server's refusal (a `ProtocolError`), or why the call could not be sent (e.g. a connection refused). */
  error: unknown;
  /**
   * True when the server did not answer (it could not be reached, the answer was lost, or a balancer or a starting
   * server turned the call away with 502/503): the call stays in the journal and the next `resumeAll()` sends it
   * again. False when the server answered with an error (a refusal) or the call needs input no handler gives: the
   * journal forgets it, and this report is the app's only news of it.
   */
  pending: boolean;
}

/** A call `resumeAll()` sent again that the server answered with a result, without a task. */
export interface ResumedResult {
  call: PendingCall;
  result: JsonObject;
}

/**
 * What `resumeAll()` resolves to: the handles of the tasks (an array, as before), with the calls that failed and
 * those answered at once on non-enumerable properties (so the array compares and serialises as a plain one).
 */
export type ResumedTasks = TaskHandle[] & {
  readonly failures: ResumeFailure[];
  readonly results: ResumedResult[];
};

const handleOf = (client: TaskClient, e: JournalEntry): TaskHandle =>
  new TaskHandle(client, e.taskId, e.tool, {
    ...(e.label === undefined ? {} : { label: e.label }),
    ...(e.args === undefined ? {} : { args: e.args as JsonObject }),
  });

/** The pending calls sent again, in order; after one finds the server unreachable, the rest are kept unsent. */
async function resendPending(deps: ToolCallDeps, found: Map<string, TaskHandle>) {
  const failures: ResumeFailure[] = [];
  const results: ResumedResult[] = [];
  let unreachable: { error: unknown } | undefined;
  for (const call of deps.settings.journal?.pendingCalls?.(deps.server) ?? []) {
    if (unreachable !== undefined) {
      failures.push({ call, error: unreachable.error, pending: true });
      continue;
    }
    const outcome = await resendCall(deps, call);
    if (outcome.kind === 'task') found.set(outcome.task.taskId, outcome.task);
    else if (outcome.kind === 'result') results.push({ call, result: outcome.result });
    else {
      failures.push({ call, error: outcome.error, pending: outcome.pending });
      if (neverSent(outcome.error)) unreachable = { error: outcome.error };
    }
  }
  return { failures, results };
}

/** See `McpClient.resumeAll`. */
export async function resumeAll(deps: ToolCallDeps): Promise<ResumedTasks> {
  const resent = new Map<string, TaskHandle>();
  const { failures, results } = await resendPending(deps, resent);
  const handles = (deps.settings.journal?.unfinished(deps.server) ?? []).map(
    (e) => resent.get(e.taskId) ?? handleOf(deps.taskClient, e),
  );
  // A resent call's task that ended meanwhile is not unfinished in the journal, yet the app never saw it.
  const listed = new Set(handles.map((h) => h.taskId));
  for (const [taskId, handle] of resent) if (!listed.has(taskId)) handles.push(handle);
  return Object.defineProperties(handles, {
    failures: { value: failures },
    results: { value: results },
  }) as ResumedTasks;
}
