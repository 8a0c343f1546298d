// Domain errors of the task layer, and the errors a task can end with. Both carry JSON-RPC codes (a failed task keeps
// a JSON-RPC error): the numbers come from `TaskErrorCode`, the task layer's view of wire/codes.ts (which this layer
// does not import; errors.test.ts pins the two equal).
import type { TaskError } from './task.js';

/** The JSON-RPC codes the task layer uses: the same numbers as `ErrorCode` in wire/codes.ts. */
export const TaskErrorCode = {
  InvalidParams: -32602,
  InternalError: -32603,
  MissingRequiredClientCapability: -32021,
} as const;

/** A task that reached its TTL before ending. */
export const TASK_EXPIRED_ERROR: TaskError = { code: TaskErrorCode.InternalError, message: 'task expired' };

/** A task whose run was cut by a crash, for a tool that must not run again after one. */
export const TASK_CRASHED_ERROR: TaskError = {
  code: TaskErrorCode.InternalError,
  message: 'server restarted while the task was running',
};

/** A run that failed outside the tool's own code (the tool's own errors are tool results). */
export const TASK_INTERNAL_ERROR: TaskError = {
  code: TaskErrorCode.InternalError,
  message: 'Internal error',
};

/** The store could not be reached or refused the write (busy, disk full, connection lost). */
export class StoreUnavailableError extends Error {
  readonly wireCode = TaskErrorCode.InternalError;
  /**
   * @param unreachable True when the store did not answer, or answered only that it cannot serve yet (connection
   *   refused or cut, a timeout, a failed name lookup, a server starting up or out of connections): the same call
   *   may succeed later unchanged. False when it refused (login, privileges, schema) or the cause is unknown.
   */
  constructor(
    readonly reason: string,
    readonly unreachable = false,
  ) {
    super(`Task store unavailable: ${reason}`);
    this.name = 'StoreUnavailableError';
  }
}

/** An idempotency key already names a live task of the same owner and tool that was created with other arguments. */
export class IdempotencyConflictError extends Error {
  readonly wireCode = TaskErrorCode.InvalidParams;
  constructor(
    readonly taskId: string,
    message = 'Invalid params: this idempotency key was already used with different arguments',
  ) {
    super(message);
    this.name = 'IdempotencyConflictError';
  }
}

/**
 * A task of the same owner and tool with the same debounce key is pending (not started, its window open) with other
 * arguments, and the tool does not replace them (TaskPolicy.debounce): refused as an idempotency conflict is.
 */
export class DebounceConflictError extends IdempotencyConflictError {
  constructor(taskId: string) {
    super(taskId, 'Invalid params: a task with this debounce key is pending with different arguments');
    this.name = 'DebounceConflictError';
  }
}

/**
 * Which quota refused a task: its owner's unfinished or kept tasks, or its whole tenant's; or the bytes its owner's
 * kept tasks store (`stored-bytes`).
 */
export type TaskQuota = 'active' | 'stored' | 'tenant-active' | 'tenant-stored' | 'stored-bytes';

const QUOTA_TEXT: Record<TaskQuota, string> = {
  active: 'Too many unfinished tasks',
  stored: 'Too many stored tasks',
  'tenant-active': "Too many unfinished tasks in this principal's tenant",
  'tenant-stored': "Too many stored tasks in this principal's tenant",
  'stored-bytes': "Too many bytes in this principal's stored tasks",
};

/**
 * A new task is refused: its owner already has `limit` unfinished tasks (NewTask.activeLimit, quota `active`), or
 * keeps `limit` tasks of any status (NewTask.storedLimit, `stored`), or its tenant does (NewTask.tenantLimits); or
 * the task (or a step's value: SaveStepOptions.storedBytesLimit) would put its owner's stored tasks over `limit`
 * bytes (NewTask.storedBytesLimit, `stored-bytes`).
 */
export class ActiveLimitError extends Error {
  constructor(
    readonly limit: number,
    readonly quota: TaskQuota = 'active',
  ) {
    super(`${QUOTA_TEXT[quota]} (limit ${limit})`);
    this.name = 'ActiveLimitError';
  }
}
