// The task domain model: statuses, the stored record, and what a run produces.

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
export const isTerminal = (status: TaskStatus): boolean => TERMINAL_STATUSES.includes(status);

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonMap = Record<string, unknown>;

export interface TaskOwner {
  tenant: string;
  principal: string;
}

export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

/** A task as its owner sees it (what tasks/get and notifications/tasks are built from). */
export interface TaskSnapshot {
  id: string;
  status: TaskStatus;
  statusMessage: string | undefined;
  createdAt: number;
  updatedAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | undefined;
  /** Outstanding input requests, keyed by their lifetime-unique keys (only while input_required). */
  inputRequests: Record<string, JsonMap>;
  result: JsonMap | undefined;
  error: TaskError | undefined;
  /**
   * Store-internal, never on the wire: grows with every write of the task, so that snapshots reaching a process
   * by different paths (a read, a change feed) can be put in commit order. Set by stores whose change feed carries
   * snapshots (PostgreSQL); absent where every snapshot is a read serialised with the writes (SQLite).
   */
  revision?: number;
}

export interface NewTask {
  id: string;
  owner: TaskOwner;
  tool: string;
  args: JsonMap;
  createdAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | undefined;
  statusMessage: string | undefined;
  replayAfterCrash: boolean;
  /** Client capabilities of the creating request: input requests must stay within them. */
  clientCapabilities: JsonMap;
  /** Answers gathered before creation (MRTR rounds), usable by the run like any other answer. */
  answers: Record<string, JsonMap>;
  /** The tool is marked sensitive: its payloads are encrypted at rest when the store has a key. */
  sensitive?: boolean;
}

/** What a worker gets when it claims a task: everything needed to (re)run the handler. */
export interface ClaimedTask {
  id: string;
  owner: TaskOwner;
  tool: string;
  args: JsonMap;
  /** Fencing token: every write of this run is conditional on it. */
  token: number;
  /** True when the previous holder's lease expired mid-run (a crash), not a clean hand-over. */
  takenOver: boolean;
  replayAfterCrash: boolean;
  cancelRequested: boolean;
  clientCapabilities: JsonMap;
  steps: Record<string, Json>;
  answers: Record<string, JsonMap>;
  /** Keys ever asked during this task's life (answered or not). */
  askedKeys: string[];
}

/** How a run ended. */
export type RunOutcome =
  | { kind: 'completed'; result: JsonMap }
  | { kind: 'failed'; error: TaskError; statusMessage: string }
  | { kind: 'input_required'; requests: Record<string, JsonMap>; statusMessage?: string }
  | { kind: 'cancelled' }
  | { kind: 'released' };

/** Why a lookup found nothing usable. Foreign, purged and never-existing ids are all `not_found`. */
export type LookupMiss = 'not_found' | 'expired';
