// The HandlerContext a tool handler gets when it runs (or replays) as a durable task.
import {
  checkedMs,
  checkedProgress,
  checkedStatus,
  checkedTime,
  mergeStepOptions,
  type EventResult,
  stepOptionsProblem,
  type ExecutionContext,
} from '../../tasks/execution.js';
import { checkJsonSize, checkTextSize, DEFAULT_TASK_LIMITS } from '../../tasks/limits.js';
import { mapSteps } from '../../tasks/step-map.js';
import { DEFAULT_CALLBACK_TTL_MS, type CallbackTokens } from '../../tasks/callback-tokens.js';
import { eventNameProblem } from '../../tasks/events.js';
import type { ClaimedTask, JsonValue } from '../../tasks/task.js';
import { compileSchema } from '../schema-validation.js';
import type { ClientCapabilities } from '../../wire/envelope.js';
import { LATEST_PROTOCOL_VERSION } from '../../wire/meta-keys.js';
import type { HandlerContext, ServerControl } from '../tool-types.js';
import type { StepDefaults, ToolInputMethod } from '../define.js';
import { checkDeclared } from '../tool-asks.js';
import { taskStreamWriter } from '../stream-writer.js';
import { InputPending, missingCapabilityFor } from '../mrtr.js';
import { checkInputRequests } from '../input-requests.js';
import { ErrorCode } from '../../wire/codes.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import type { InputRequests, InputResponses, JsonObject } from '../types.js';
import { checkedCallName, childResult, type StartChild } from './child-tasks.js';

/** "Copying (3/10)": what `ctx.progress` shows as the task's statusMessage. */
export function progressMessage(progress: number, total?: number, message?: string): string {
  const count = total === undefined ? `${progress}` : `${progress}/${total}`;
  return message === undefined || message === '' ? `Progress: ${count}` : `${message} (${count})`;
}

/** What a task stores of the input it asks for, checked against maxResultBytes where the handler asks. */
function checkRequestSizes(requests: InputRequests, maxBytes: number): void {
  for (const [key, request] of Object.entries(requests))
    checkJsonSize(`input request "${key}"`, request, 'maxResultBytes', maxBytes);
}

/** A status message the task would store, checked against maxResultBytes. */
function keptStatus(message: string, maxBytes: number): string {
  checkTextSize('the status message', message, 'maxResultBytes', maxBytes);
  return message;
}

/** What a task waiting for input says it is doing (rather than what it did last). */
export function waitingMessage(requests: InputRequests): string {
  const methods = [...new Set(Object.values(requests).map((r) => String(r.method)))];
  return `The task is waiting for input (${methods.join(', ')}).`;
}

/** ctx.waitForInput: requests checked as ctx.inputs checks them, and those the task's client cannot answer refused. */
function liveInput(
  task: ClaimedTask,
  exec: ExecutionContext,
  asks: readonly ToolInputMethod[] | undefined,
  maxResultBytes: number,
): HandlerContext['waitForInput'] {
  return async (requests, options = {}) => {
    if (exec.waitForInput === undefined)
      throw new TypeError('ctx.waitForInput needs a task store that can wait for input live');
    checkDeclared(asks, requests);
    checkInputRequests(requests);
    checkRequestSizes(requests, maxResultBytes);
    for (const request of Object.values(requests)) {
      const missing = missingCapabilityFor(request, task.clientCapabilities);
      if (missing !== undefined)
        throw new ProtocolError(
          ErrorCode.MissingRequiredClientCapability,
          `The task needs the client capability for ${request.method}`,
          { requiredCapabilities: missing },
        );
    }
    const asked = requests as Record<string, JsonObject>;
    return exec.waitForInput(asked, waitingMessage(requests), options.signal);
  };
}

/** How long ctx.waitForEvent waits when the tool does not say (24 hours). */
export const DEFAULT_EVENT_TIMEOUT_MS = 24 * 3_600_000;
/** The largest schema a wait for an event may keep, as bytes of its JSON. */
export const MAX_EVENT_SCHEMA_BYTES = 16 * 1024;

/** What a task's events need from the server: its public URL and the callback tokens (HandlerContext.callbackUrl). */
export interface TaskEventOptions {
  /** The URL clients and webhook senders reach this server at (`serve --public-url`); none: no callback URLs. */
  publicUrl?: string;
  tokens?: CallbackTokens;
}

/** ctx.waitForEvent: name, time out and schema checked; a payload kept before the wait is checked against it. */
function eventWait(exec: ExecutionContext): HandlerContext['waitForEvent'] {
  return async <T extends JsonValue>(
    name: string,
    options: { timeoutMs?: number; schema?: JsonObject } = {},
  ) => {
    const problem = eventNameProblem(name);
    if (problem !== undefined) throw new TypeError(`ctx.waitForEvent: ${problem}`);
    if (exec.waitForEvent === undefined)
      throw new TypeError('ctx.waitForEvent needs a task store that keeps events from outside');
    const timeoutMs = checkedMs(name, options.timeoutMs ?? DEFAULT_EVENT_TIMEOUT_MS, exec.now());
    const { schema } = options;
    if (schema !== undefined)
      checkJsonSize(`the schema of event "${name}"`, schema, 'maxResultBytes', MAX_EVENT_SCHEMA_BYTES);
    const validate = schema === undefined ? undefined : compileSchema(schema, 'payload');
    const answer = await exec.waitForEvent(name, {
      until: exec.now() + timeoutMs,
      schema,
      check: (payload) => {
        const checked = validate?.(payload);
        return checked === undefined || checked.ok ? undefined : checked.reason;
      },
    });
    return answer as EventResult<T>;
  };
}

/** ctx.callbackUrl: a signed URL of this server that delivers event `name` to the task. */
function callbackUrl(
  task: ClaimedTask,
  exec: ExecutionContext,
  events: TaskEventOptions,
): HandlerContext['callbackUrl'] {
  return (name, options = {}) => {
    const problem = eventNameProblem(name);
    if (problem !== undefined) throw new TypeError(`ctx.callbackUrl: ${problem}`);
    const { publicUrl, tokens } = events;
    if (publicUrl === undefined || tokens === undefined)
      throw new Error(
        'ctx.callbackUrl needs the public URL of the server: `serve --public-url <url>`, or publicUrl in createDurableMcp',
      );
    const ttl = checkedMs(name, options.expiresInMs ?? DEFAULT_CALLBACK_TTL_MS, exec.now());
    return `${publicUrl.replace(/\/+$/, '')}/callbacks/${tokens.issue(task.id, name, exec.now() + ttl)}`;
  };
}

/** ctx.callTool: a child task of the tool, started durably and waited for without a worker (ExecutionContext.child). */
function childCall(
  task: ClaimedTask,
  exec: ExecutionContext,
  startChild: StartChild | undefined,
): HandlerContext['callTool'] {
  return async (name, args = {}, options = {}) => {
    if (startChild === undefined)
      throw new TypeError('ctx.callTool needs the server to start child tasks (createDurableMcp does)');
    const call = checkedCallName(name, options);
    const detached = options.detached === true;
    const outcome = await exec.child(call, (childId) => startChild(task, childId, name, args, detached));
    return childResult(name, outcome);
  };
}

/**
 * `maxResultBytes`: the largest input request and status message the task may store (TaskLimits); `startChild`:
 * creates the child tasks of `ctx.callTool` (none: it throws); `events`: what callback URLs need (none:
 * ctx.callbackUrl throws).
 */
export function createTaskHandlerContext(
  task: ClaimedTask,
  exec: ExecutionContext,
  control: ServerControl,
  steps?: StepDefaults,
  asks?: readonly ToolInputMethod[],
  maxResultBytes = DEFAULT_TASK_LIMITS.maxResultBytes,
  startChild?: StartChild,
  events: TaskEventOptions = {},
): HandlerContext {
  /** The end of the run asking for `requests`: checked (valid requests first, then their size). */
  const pending = (requests: InputRequests): InputPending => {
    const ask = new InputPending(requests, undefined);
    checkRequestSizes(requests, maxResultBytes);
    return ask;
  };
  const inputs = (requests: InputRequests): InputResponses => {
    checkDeclared(asks, requests);
    const missing: InputRequests = {};
    const found: InputResponses = {};
    for (const [key, request] of Object.entries(requests)) {
      const answer = Object.hasOwn(task.answers, key) ? task.answers[key] : undefined;
      if (answer === undefined) missing[key] = request;
      else found[key] = answer as InputResponses[string];
    }
    if (Object.keys(missing).length > 0) throw pending(missing);
    return found;
  };
  const step: HandlerContext['step'] = async (name, fn, options) => {
    const merged = mergeStepOptions(steps, options);
    const problem = stepOptionsProblem(merged);
    if (problem !== undefined) throw new TypeError(`step "${name}": ${problem}`);
    return exec.step(name, fn, merged);
  };
  // Without a plan from the run (an ExecutionContext of an older runtime), nothing is kept nor counted up front.
  const plan = (what: string, names: readonly string[]): readonly boolean[] =>
    exec.planSteps?.(what, names) ?? names.map(() => false);
  return {
    requestId: task.id,
    method: 'tools/call',
    envelope: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      clientCapabilities: task.clientCapabilities as ClientCapabilities,
      clientInfo: undefined,
      logLevel: undefined,
      progressToken: undefined,
    },
    auth: task.owner,
    signal: exec.signal,
    taskId: task.id,
    requestState: undefined,
    server: control,
    // Progress notifications are not part of tasks in this revision: progress becomes the statusMessage (and, for a
    // call that waits on the task, progress notifications of that call: background.ts).
    progress: (value, total, message) =>
      exec.progress(
        checkedProgress(value, total, message),
        keptStatus(progressMessage(value, total, message), maxResultBytes),
      ),
    log() {},
    input: (key, request) => inputs({ [key]: request })[key] as InputResponses[string],
    inputs,
    waitForInput: liveInput(task, exec, asks, maxResultBytes),
    inputRequired(options): never {
      checkDeclared(asks, options.inputRequests ?? {});
      throw pending(options.inputRequests ?? {});
    },
    step,
    map: (name, items, fn, options) => mapSteps({ step, plan }, name, items, fn, options),
    sleep: async (name, ms) => exec.sleepUntil(name, exec.now() + checkedMs(name, ms, exec.now())),
    sleepUntil: async (name, at) => exec.sleepUntil(name, checkedTime(name, at)),
    status: async (message) => exec.status(keptStatus(checkedStatus(message), maxResultBytes)),
    patched: (id) => exec.patched(id),
    stream: (name) => taskStreamWriter(task.id, exec, name),
    callTool: childCall(task, exec, startChild),
    waitForEvent: eventWait(exec),
    callbackUrl: callbackUrl(task, exec, events),
  };
}
