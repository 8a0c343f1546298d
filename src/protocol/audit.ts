// Audit events for task access: who did what to which task, and the outcome. Never payloads or secrets.

/**
 * `task.joined`: a tools/call whose idempotency key named an existing task got that task. `admin.*`: an operator's
 * change through the operator API (`tenant`/`principal` are the operator's), and `admin.denied` a refused attempt
 * (not an operator, or no valid CSRF token); `admin.payloads` an operator's read of a task's payloads; `admin.bulk` an
 * operator's bulk change as a whole (`method` names it); `admin.pause` and `admin.resume` an operator's pause or
 * resume of a tool or a concurrency key (`pause` names it). `task.event`: a delivery of an event to a task (by its
 * owner, or through a callback URL), `admin.event` one by an operator; `outcome` says what came of it.
 */
export type AuditEventName =
  | 'task.created'
  | 'task.joined'
  | 'task.cancel'
  | 'task.answered'
  | 'task.denied'
  | 'task.limited'
  | 'task.event'
  | 'auth.denied'
  | 'admin.cancel'
  | 'admin.retry'
  | 'admin.purge'
  | 'admin.bulk'
  | 'admin.pause'
  | 'admin.resume'
  | 'admin.payloads'
  | 'admin.event'
  | 'admin.denied';

export interface AuditEvent {
  event: AuditEventName;
  tenant?: string;
  principal?: string;
  taskId?: string;
  /** `admin.retry`: the new task the retry made of `taskId`. */
  retryTaskId?: string;
  /** `admin.retry` with a recorded step: the step whose value the operator recorded in the new task. */
  recordedStep?: string;
  tool?: string;
  method?: string;
  /** `admin.bulk`: the tasks a bulk change matched, and those it changed (each has its own `admin.*` line too). */
  matched?: number;
  touched?: number;
  /** `admin.pause`, `admin.resume`: what was paused or resumed (names bounded), and how many tasks a resume woke. */
  pause?: { kind: string; name: string; tenant?: string };
  resumed?: number;
  /** `task.event`, `admin.event`: the name of the event delivered. */
  eventName?: string;
  outcome: string;
}

export type AuditLog = (event: AuditEvent) => void;

/** One JSON line per event (to stderr by default), with a timestamp. */
export function createJsonAuditLog(
  write: (line: string) => void = (line) => process.stderr.write(line),
): AuditLog {
  return (event) => write(`${JSON.stringify({ ts: new Date().toISOString(), type: 'audit', ...event })}\n`);
}
