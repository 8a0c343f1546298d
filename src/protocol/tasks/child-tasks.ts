// Child tasks (ctx.callTool): a task's handler calls another tool of the server as a task of the same owner, and
// waits for its result without holding a worker (worker/children.ts keeps the wait and the outcome).
import { ActiveLimitError } from '../../tasks/errors.js';
import type { ChildOutcome, ChildStart } from '../../tasks/execution.js';
import type { TaskStore } from '../../tasks/store.js';
import type { ClaimedTask, TaskError } from '../../tasks/task.js';
import { invalidParams } from '../../wire/protocol-error.js';
import type { AuditLog } from '../audit.js';
import type { Registry } from '../registry.js';
import type { CallToolOptions } from '../tool-types.js';
import type { CallToolResult, JsonObject } from '../types.js';
import { TOO_MANY_REQUESTS } from './task-access.js';
import { newTaskOf, quotasOf, type TaskDefaults } from './task-start.js';

/** The ending status of a child task that did not complete. */
export type ChildTaskStatus = 'failed' | 'cancelled' | 'expired';

/**
 * Thrown by `ctx.callTool` when the child task failed, was cancelled or expired before it completed (a child that
 * completed with a tool error, `isError: true`, is a result, not this error). The handler may catch it.
 */
export class ChildTaskFailedError extends Error {
  constructor(
    /** The child task's id. */
    readonly taskId: string,
    readonly tool: string,
    readonly status: ChildTaskStatus,
    /** The child's error (status `failed`). */
    readonly error?: TaskError,
  ) {
    const why = error === undefined ? status : `${status}: ${error.message}`;
    super(`child task ${taskId} of tool ${tool} ${why}`);
    this.name = 'ChildTaskFailedError';
  }
}

/**
 * Thrown by `ctx.callTool` when the child task could not be created: its owner is over a quota (unfinished tasks,
 * kept tasks, stored bytes). Nothing waits: the call fails at once. The refusal is kept, so replays take the same path.
 */
export class ChildTaskRefusedError extends Error {
  constructor(
    readonly tool: string,
    /** The refusal as kept: code 429, `data` naming the quota and its limit. */
    readonly error: TaskError,
  ) {
    super(`child task of tool ${tool} refused: ${error.message}`);
    this.name = 'ChildTaskRefusedError';
  }
}

/** Creates child `childId` of `parent` for a call of `tool` (ExecutionContext.child's `start`). */
export type StartChild = (
  parent: ClaimedTask,
  childId: string,
  tool: string,
  args: JsonObject,
  detached: boolean,
) => Promise<ChildStart>;

export interface ChildTaskDeps {
  store: TaskStore;
  now: () => number;
  /** The server's task defaults and quotas, as tools/call applies them. */
  defaults: TaskDefaults;
  audit?: AuditLog;
}

/** The refusal of a child over a quota, as the parent keeps it. */
function refusalOf(err: ActiveLimitError): TaskError {
  return { code: TOO_MANY_REQUESTS, message: err.message, data: { quota: err.quota, limit: err.limit } };
}

/**
 * Child tasks of the tools of `registry` (a gateway's mirrored tools included): created as tools/call creates a
 * task (the tool's policy over the server's defaults, counted against the owner's quotas), with the parent's owner
 * and client capabilities.
 */
export function childStarter(registry: Registry, deps: ChildTaskDeps): StartChild {
  const audit = deps.audit ?? (() => undefined);
  return async (parent, childId, name, args, detached) => {
    const tool = registry.tools.get(name);
    if (tool === undefined) throw invalidParams(`ctx.callTool: unknown tool: ${name}`);
    const policy = tool.def.task ?? { support: 'optional' };
    if (policy.support === 'never')
      throw new TypeError(`ctx.callTool: tool ${name} runs only within its request, never as a task`);
    if (policy.prepare !== undefined)
      throw new TypeError(`ctx.callTool: tool ${name} asks its caller before its task exists (task.prepare)`);
    const valid = tool.validate(args);
    if (!valid.ok) throw invalidParams(`ctx.callTool: invalid arguments for tool ${name}: ${valid.reason}`);
    const task = newTaskOf(
      deps.defaults,
      policy,
      tool,
      args,
      parent.owner,
      {
        key: undefined,
        answers: {},
        capabilities: parent.clientCapabilities,
        ...quotasOf(deps.defaults),
        priority: undefined,
        // The child's runs join the parent's trace.
        trace: parent.trace,
        parent: detached ? { id: parent.id, detached: true } : { id: parent.id },
      },
      deps.now(),
      childId,
    );
    const event = { ...parent.owner, taskId: childId, tool: name };
    try {
      await deps.store.create(task);
    } catch (err) {
      if (err instanceof ActiveLimitError) {
        audit({ ...event, event: 'task.limited', outcome: 'child_refused' });
        return { started: false, error: refusalOf(err) };
      }
      // A run of the parent that lost its lease created it meanwhile: the same child, under the same id.
      const found = await deps.store.get(childId, parent.owner, deps.now());
      if (found === 'not_found') throw err;
      return { started: true };
    }
    audit({ ...event, event: 'task.created', outcome: 'created' });
    return { started: true };
  };
}

/** What `ctx.callTool` returns for a child's outcome, or throws. */
export function childResult(tool: string, outcome: ChildOutcome): CallToolResult {
  switch (outcome.status) {
    case 'completed':
      return outcome.result as unknown as CallToolResult;
    case 'refused':
      throw new ChildTaskRefusedError(tool, outcome.error);
    case 'failed':
      throw new ChildTaskFailedError(outcome.taskId, tool, 'failed', outcome.error);
    default:
      throw new ChildTaskFailedError(outcome.taskId, tool, outcome.status);
  }
}

/** A call's name among the task's records, checked (CallToolOptions.name). */
export function checkedCallName(tool: string, options: CallToolOptions): string {
  const name = options.name ?? tool;
  if (typeof name !== 'string' || name.length === 0 || name.length > 200)
    throw new TypeError('ctx.callTool: options.name must be 1 to 200 characters');
  return name;
}
