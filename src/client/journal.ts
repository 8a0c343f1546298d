// The client journal port: task ids kept durably so a restarted client can pick its tasks up again.

/** The longest `label` a call may carry, in characters. */
export const MAX_LABEL_LENGTH = 256;

export interface JournalEntry {
  taskId: string;
  /** Where the task lives (the server URL or transport description). */
  server: string;
  tool: string;
  createdAt: number;
  /** Last known status; terminal entries are kept until forgotten. */
  status: string;
  /** The idempotency key of the call that created the task, when it sent one. */
  idempotencyKey?: string;
  /** The label the app gave the call that created the task (`CallOptions.label`). */
  label?: string;
  /** The call's arguments, kept while the task is unfinished (a terminal status drops them). */
  args?: Record<string, unknown>;
}

/** A tools/call sent (or about to be) whose answer has not arrived yet: enough to send it again. */
export interface PendingCall {
  idempotencyKey: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  createdAt: number;
  /** The label the app gave the call (`CallOptions.label`), if any. */
  label?: string;
}

export interface Journal {
  /** Records a task a call created (or found again); a second record of the same task updates it. */
  record(entry: JournalEntry): void;
  update(taskId: string, status: string): void;
  /** Entries not yet seen in a terminal state, for one server or all. */
  unfinished(server?: string): JournalEntry[];
  forget(taskId: string): void;
  /**
   * Records a call before it is sent (optional: without it, a call whose answer a crash lost cannot be resumed).
   * Sending it again with the same idempotency key gets the task it created, never a second one.
   */
  beginCall?(call: PendingCall): void;
  /** The call was answered (a task, a result or an error): it is no longer pending. */
  endCall?(idempotencyKey: string): void;
  /** Calls begun and never answered, for one server or all, oldest first. */
  pendingCalls?(server?: string): PendingCall[];
  close(): void;
}
