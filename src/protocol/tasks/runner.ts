// The TaskRunner the worker calls: replays a tool handler and turns its ending into a RunOutcome.
import { UNSERIALIZABLE_RESULT } from '../../wire/jsonrpc.js';
import { ErrorCode } from '../../wire/codes.js';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { LeaseLostError, mergeStepOptions, WaitPending, type TaskRunner } from '../../tasks/execution.js';
import type { ClaimScope } from '../../tasks/store.js';
import { bytesOver, resolveTaskLimits, TaskLimitError } from '../../tasks/limits.js';
import type { ClaimedTask, RunOutcome, TaskError } from '../../tasks/task.js';
import { META_SERVER_INFO } from '../../wire/meta-keys.js';
import { ProtocolError, toProtocolError } from '../../wire/protocol-error.js';
import type { StepDefaults } from '../define.js';
import { InputPending, missingCapabilityFor } from '../mrtr.js';
import type { Registry, RegisteredTool } from '../registry.js';
import type { ServerInfo } from '../server.js';
import { describeFailure, isToolExecutionError, toolErrorResult, toolErrorStatus } from '../tool-errors.js';
import { toolResult } from '../tools.js';
import type { InputRequests, JsonObject } from '../types.js';
import { createTaskHandlerContext, waitingMessage, type TaskEventOptions } from './task-context.js';
import type { StartChild } from './child-tasks.js';

export interface TaskRunnerOptions {
  /** Server-wide defaults of `ctx.step` (under each tool's own). */
  steps?: StepDefaults;
  /**
   * The largest result, error, input request or status message a task may store, as UTF-8 bytes of its JSON (or plain)
   * text (default 4 MiB).
   */
  maxResultBytes?: number;
  /** Creates the child tasks of `ctx.callTool` (childStarter); without it `ctx.callTool` throws. */
  children?: StartChild;
  /** The public URL and callback tokens of ctx.callbackUrl (none: it throws). */
  events?: TaskEventOptions;
}

/** The run asked for input: outstanding requests the client can answer, or why the task cannot go on. */
function inputOutcome(task: ClaimedTask, err: InputPending): RunOutcome {
  // Keys are unique for the task's life: an answered key cannot be asked again.
  const requests = Object.fromEntries(
    Object.entries(err.requests).filter(([key]) => !Object.hasOwn(task.answers, key)),
  );
  if (Object.keys(requests).length === 0) {
    const error = {
      code: ErrorCode.InternalError,
      message: 'The task asked only for input it had already received',
    };
    return { kind: 'failed', error, statusMessage: error.message };
  }
  for (const request of Object.values(requests)) {
    const missing = missingCapabilityFor(request, task.clientCapabilities);
    if (missing !== undefined) {
      const error = new ProtocolError(
        ErrorCode.MissingRequiredClientCapability,
        `The task needs the client capability for ${request.method}`,
        {
          requiredCapabilities: missing,
        },
      );
      return { kind: 'failed', error: error.toJSON(), statusMessage: error.message };
    }
  }
  return {
    kind: 'input_required',
    requests: requests as Record<string, JsonObject>,
    statusMessage: waitingMessage(requests as InputRequests),
  };
}

/** A protocol error as a task keeps it: without its data and message when they are over the limit. */
function keptError(err: unknown, maxBytes: number): TaskError {
  const error = toProtocolError(err).toJSON();
  const bytes = bytesOver(JSON.stringify(error), maxBytes);
  if (bytes === undefined) return error;
  const limit = new TaskLimitError(`the error is ${bytes} bytes, over the limit`, 'maxResultBytes', maxBytes);
  return { code: error.code, message: limit.message };
}

/** A thrown error: a tool error result (completed) unless it is a protocol error (failed); kept either way. */
function errorOutcome(
  tool: RegisteredTool,
  err: unknown,
  at: number,
  info: ServerInfo,
  maxBytes: number,
): RunOutcome {
  const failure = describeFailure(err, at);
  if (!isToolExecutionError(err)) {
    const error = keptError(err, maxBytes);
    return { kind: 'failed', error, statusMessage: `The task failed: ${error.message}`, failure };
  }
  const visibility = tool.def.errors;
  const result = withServerInfo(toolErrorResult(failure, visibility), info);
  return { kind: 'completed', result, statusMessage: toolErrorStatus(failure, visibility), failure };
}

/** The JSON text of a result, or undefined when it has none. */
const jsonText = (value: unknown): string | undefined => {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
};

/** A result over the limit is the handler's mistake, as one that is no result is: the task fails, nothing stored. */
function checkResultSize(text: string, maxBytes: number): void {
  const bytes = bytesOver(text, maxBytes);
  if (bytes === undefined) return;
  const limit = new TaskLimitError(
    `the result is ${bytes} bytes, over the limit`,
    'maxResultBytes',
    maxBytes,
  );
  throw new ProtocolError(ErrorCode.InternalError, limit.message);
}

const withServerInfo = (result: JsonObject, info: ServerInfo): JsonObject => ({
  ...result,
  _meta: { [META_SERVER_INFO]: info, ...((result._meta as JsonObject | undefined) ?? {}) },
});

export function createTaskRunner(
  registry: Registry,
  info: ServerInfo,
  options: TaskRunnerOptions = {},
): TaskRunner {
  const control = registry.control();
  const { maxResultBytes } = resolveTaskLimits({ maxResultBytes: options.maxResultBytes });
  return async (task, exec): Promise<RunOutcome> => {
    const tool = registry.tools.get(task.tool);
    if (tool === undefined) {
      // Claimed only once no process served it for the drain period (claimScopeOf).
      const error = { code: ErrorCode.InvalidParams, message: `Unknown tool: ${task.tool}` };
      return {
        kind: 'failed',
        error,
        statusMessage: `The tool ${task.tool} is no longer available: no server has offered it for this task.`,
      };
    }
    const steps = mergeStepOptions(options.steps, tool.def.steps);
    try {
      const value = await tool.def.handler(
        task.args as never,
        createTaskHandlerContext(
          task,
          exec,
          control,
          steps,
          tool.def.asks,
          maxResultBytes,
          options.children,
          options.events,
        ),
      );
      const result = withServerInfo(toolResult(tool, value), info);
      const text = jsonText(result);
      if (text === undefined) {
        // Stored as it is, it would fail every write and the task would run again and again.
        const error = { code: ErrorCode.InternalError, message: UNSERIALIZABLE_RESULT };
        return { kind: 'failed', error, statusMessage: 'The tool returned a result that is not JSON.' };
      }
      checkResultSize(text, maxResultBytes);
      // Said outright: the message the run set last (or an input's wait) is no longer what the task is doing.
      return { kind: 'completed', result, statusMessage: 'The task completed.' };
    } catch (err) {
      // Neither ends the task: the worker ends this run without a write, and the task runs again later.
      if (err instanceof LeaseLostError || err instanceof StoreUnavailableError) throw err;
      if (err instanceof WaitPending)
        return { kind: 'waiting', until: err.until, statusMessage: err.statusMessage };
      if (err instanceof InputPending) return inputOutcome(task, err);
      if (exec.signal.aborted) return { kind: 'cancelled' };
      return errorOutcome(tool, err, exec.now(), info, maxResultBytes);
    }
  };
}

/**
 * The tasks a process with this registry can run (ClaimScope): each tool's tasks of its version and of the versions
 * it declares compatible, and, once untouched for `removedToolDrainMs`, tasks of tools it does not serve (their
 * run fails them: the tool is gone), except while `hold` answers true.
 */
export function claimScopeOf(
  registry: Registry,
  removedToolDrainMs: number,
  now: () => number,
  hold?: () => boolean,
): () => ClaimScope {
  return () => {
    const tools: Record<string, string[]> = {};
    for (const [name, tool] of registry.tools) {
      const { version, compatibleVersions = [] } = tool.def;
      tools[name] = version === undefined ? [...compatibleVersions] : [version, ...compatibleVersions];
    }
    if (hold?.() === true) return { tools };
    return { tools, orphanedBefore: now() - removedToolDrainMs };
  };
}
