// The JSON the operator API answers (docs/operations.md, "Operator API"), as the dashboard reads it.

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export const STATUSES: readonly TaskStatus[] = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
];
export const isTerminal = (s: TaskStatus): boolean =>
  s === 'completed' || s === 'failed' || s === 'cancelled';

export interface Session {
  tenant: string;
  principal: string;
  operator: { tenants: 'all' | string[] };
  csrfToken: string;
}

export interface TaskRow {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  toolVersion?: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  updatedAt: string;
  attempt: number;
  error?: { code: number; message: string };
}

export interface TaskPage {
  items: TaskRow[];
  next?: string;
}

export interface StepFailure {
  attempt: number;
  name: string;
  message: string;
  stack?: string;
  at: string;
  final?: boolean;
}

export interface TaskDetail extends TaskRow {
  expiresAt?: string;
  leaseOwner?: string;
  leaseUntil?: string;
  wakeAt?: string;
  cancelRequested: boolean;
  idempotencyKey?: string;
  steps: {
    name: string;
    done: boolean;
    failedAttempts: number;
    lastFailure?: StepFailure;
    startedAt?: string;
    savedAt?: string;
    durationMs?: number;
  }[];
  /** The task's payloads: only from a server started with --admin-payloads. */
  arguments?: unknown;
  inputs?: { key: string; request?: unknown; answer?: unknown }[];
  result?: unknown;
  /** While the task waits for input: the keys of the requests still unanswered. */
  pendingInputs?: string[];
  /** The statuses the task took (the last 100), oldest first; absent from servers without it. */
  history?: { at: string; status: TaskStatus; statusMessage?: string }[];
  failure?: {
    ref?: string;
    name?: string;
    message: string;
    stack?: string;
    step?: string;
    attempt?: number;
    at: string;
  };
}

export interface Overview {
  byStatus: Record<TaskStatus, number>;
  byTool: { tool: string; toolVersion?: string; status: TaskStatus; count: number }[];
  windows: { windowMs: number; created: number; completed: number; failed: number }[];
  stuck: number;
}

/** One message of GET /admin/api/v1/events. */
export type TaskEvent = { taskId: string; task: TaskRow } | { taskId: string; removed: true };
