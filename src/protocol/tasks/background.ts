// Calls from clients without the tasks extension: the task runs while the call waits up to a budget, then the call
// answers like a synchronous one, asks the task's input as MRTR rounds, or hands the task back with the facade tools.
import { ErrorCode } from '../../wire/codes.js';
import { sameJson } from '../../tasks/json-equal.js';
import { ownerOf, type TaskSnapshot } from '../../tasks/task.js';
import { isJsonObject } from '../../wire/jsonrpc.js';
import { invalidParams, ProtocolError } from '../../wire/protocol-error.js';
import { MRTR_STATE_TTL_MS, missingCapabilityFor } from '../mrtr.js';
import { requestBinding } from '../request-state.js';
import { principalKey, type RoundDeps } from '../run-round.js';
import type { RequestScope } from '../scope.js';
import type { ToolCall } from '../tools.js';
import type { InputRequest, JsonObject } from '../types.js';
import { describeTask, duration, type Fallback } from './fallback.js';
import { answerInputs, deny, settleTask, type TaskAccess } from './task-access.js';
import type { StartTask } from './task-start.js';

/** What the facade tools can answer: a task handed back may ask any of it. */
const FACADE_ANSWERS = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

/** What a call without the extension needs: the shared task access, the fallback settings, task creation. */
export interface BackgroundDeps {
  access: TaskAccess;
  fallback: Fallback;
  start: StartTask;
}

/** The binding of a handed-back task's requestState: this caller, this tool, these arguments. */
const bindingOf = (call: ToolCall, scope: RequestScope): string =>
  requestBinding(principalKey(scope), scope.method, call.tool.def.name, call.args);

/**
 * The task an MRTR retry of a call without the extension continues (its requestState names it), with the retry's
 * answers written; undefined when the call is no such retry.
 */
async function resumed(
  access: TaskAccess,
  call: ToolCall,
  params: JsonObject,
  scope: RequestScope,
  deps: RoundDeps,
): Promise<TaskSnapshot | undefined> {
  if (typeof params.requestState !== 'string') return undefined;
  const opened = deps.sealer.unseal(params.requestState, bindingOf(call, scope), access.now());
  const taskId =
    opened.ok && isJsonObject(opened.value) && typeof opened.value.t === 'string'
      ? opened.value.t
      : undefined;
  if (taskId === undefined) {
    // Another round's state (the tool's prepare) is read, and judged, by that round.
    if (call.tool.def.task?.prepare !== undefined) return undefined;
    const reason = opened.ok ? 'issued for another request' : opened.reason;
    throw invalidParams(`Invalid params: requestState rejected (${reason})`);
  }
  const task = await access.store.get(taskId, ownerOf(scope.auth), access.now());
  if (typeof task === 'string') throw deny(access, scope, taskId, task);
  const responses = params.inputResponses;
  if (responses !== undefined) {
    if (!isJsonObject(responses)) throw invalidParams('Invalid params: inputResponses must be an object');
    await answerInputs(access, scope.auth, scope.method, taskId, task, responses);
  }
  return task;
}

/** Whether this client can answer every request itself, as MRTR rounds of its call. */
const answerable = (task: TaskSnapshot, scope: RequestScope): boolean =>
  Object.values(task.inputRequests).every(
    (r) =>
      missingCapabilityFor(r as unknown as InputRequest, scope.envelope.clientCapabilities) === undefined,
  );

/**
 * Each change of the task's progress or status message as `notifications/progress` of the call, for hosts that keep
 * a call alive while it reports some. The protocol wants the value to grow with every notification: it is the
 * handler's own progress (with its total) when it reported some, and then a change that does not take it further (a
 * new message at the same progress) is not sent; a task that reports none counts its status messages instead.
 */
function progressOf(scope: RequestScope, first: TaskSnapshot): ((t: TaskSnapshot) => void) | undefined {
  const token = scope.envelope.progressToken;
  if (token === undefined) return undefined;
  let sent: number | undefined;
  let last = { message: first.statusMessage, progress: first.progress };
  return (t) => {
    if (scope.signal.aborted) return;
    if (t.statusMessage === last.message && sameJson(t.progress, last.progress)) return;
    last = { message: t.statusMessage, progress: t.progress };
    const value = t.progress?.progress ?? (sent ?? 0) + 1;
    if (sent !== undefined && value <= sent) return;
    sent = value;
    const params: JsonObject = { progressToken: token, progress: value };
    if (t.progress?.total !== undefined) params.total = t.progress.total;
    if (t.statusMessage !== undefined) params.message = t.statusMessage;
    scope.emit('notifications/progress', params);
  };
}

/** The call's answer once the wait is over: the task's outcome, its input as MRTR rounds, or the hand-back. */
function answerOf(
  bg: BackgroundDeps,
  call: ToolCall,
  scope: RequestScope,
  deps: RoundDeps,
  settled: TaskSnapshot,
  budgetMs: number,
): JsonObject {
  const name = call.tool.def.name;
  switch (settled.status) {
    case 'completed':
      return { ...(settled.result as JsonObject), resultType: 'complete' };
    case 'failed': {
      const error = settled.error ?? { code: ErrorCode.InternalError, message: 'Task failed' };
      throw new ProtocolError(error.code, error.message, error.data);
    }
    case 'input_required':
      if (answerable(settled, scope)) {
        const state = deps.sealer.seal(
          { t: settled.id },
          bindingOf(call, scope),
          bg.access.now() + MRTR_STATE_TTL_MS,
        );
        return { resultType: 'input_required', inputRequests: settled.inputRequests, requestState: state };
      }
      break;
    default:
      break;
  }
  const late =
    budgetMs > 0 && settled.status === 'working' ? ` (it did not finish within ${duration(budgetMs)})` : '';
  const opening =
    `${name} goes on in the background as task ${settled.id}${late}. ` +
    `Do not call ${name} again for this request: that would start the work over.`;
  const { names } = bg.fallback;
  return { resultType: 'complete', ...describeTask(settled, names, bg.fallback.budgetMs, opening) };
}

/**
 * A call from a client without the extension: the task runs while the call waits up to the budget. It answers
 * like a synchronous call when the task ends in time (or asks its input as MRTR rounds the client can answer);
 * otherwise it hands the task back as an ordinary result, with the facade tools to follow it.
 */
export async function background(
  bg: BackgroundDeps,
  call: ToolCall,
  params: JsonObject,
  scope: RequestScope,
  deps: RoundDeps,
  budgetMs: number,
): Promise<JsonObject> {
  const { access } = bg;
  const deadline = access.now() + budgetMs;
  let task = await resumed(access, call, params, scope, deps);
  if (task === undefined) {
    // The facade answers any input the task asks (a model asks its user, or answers itself).
    const caps = { ...scope.envelope.clientCapabilities, ...FACADE_ANSWERS };
    const started = await bg.start(call, params, scope, deps, caps);
    if ('answer' in started) return started.answer;
    task = started.task;
  }
  const onChange = progressOf(scope, task);
  const settled = await settleTask(access, task.id, ownerOf(scope.auth), deadline, scope.signal, onChange);
  if (typeof settled === 'string') throw deny(access, scope, task.id, settled);
  return answerOf(bg, call, scope, deps, settled, budgetMs);
}
