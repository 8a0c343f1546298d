// The shapes of the crash and clock sections: tool arguments, client records, store rows, per-run log views.
import type { LogLine } from '../harness/log-tail.js';
import type { RpcAnswer } from '../harness/rpc.js';

/** The retry policy a chaos_job passes to its steps. */
export interface RetryPlan {
  maxAttempts: number;
  initialDelayMs: number;
  backoffFactor: number;
  maxDelayMs: number;
  jitter: number;
}

/** Planned failures per step, the retry policy and the sleeps after each step (0 for none). */
export interface DurablePlan {
  fails?: number[];
  retry?: RetryPlan;
  sleeps?: number[];
}

/** Arguments of chaos_job (the TTL probes take none but the client id). */
export interface JobArgs extends DurablePlan {
  cid?: string;
  steps: number;
  inputs: number;
  ms?: number;
  spinMs?: number;
}

/** What a client did and saw of one tools/call and its task. */
export interface ClientRec {
  cid: string;
  tool: string;
  args: JobArgs;
  cancelAfterMs?: number | undefined;
  history: string[];
  answers: Record<string, string>;
  acked: Set<string>;
  /** Idempotency key, for keyed clients; with the task ids its answers named, its dropped tries, its hedging. */
  key?: string;
  seenIds?: Set<string>;
  drops?: { afterMs: number }[];
  hedge?: boolean;
  taskId?: string;
  cidUsed?: string;
  pollMs?: number;
  createdAt?: number;
  cancelSent?: boolean;
  cancelAcked?: boolean;
  final?: RpcAnswer;
  finalAt?: number;
  expiredSeenAt?: number;
  orphan?: boolean;
  /** Retry and sleep status messages the client read. */
  waitsSeen?: Set<string>;
}

export interface TaskRow {
  id: string;
  tool: string;
  args: string;
  status: string;
  result: string | null;
  error: string | null;
  attempt: number | string;
  created_at: number | string;
  updated_at: number | string;
  expires_at: number | string;
  idempotency_key?: string | null;
}

export interface StoreSnapshot {
  tasks: TaskRow[];
  steps: { task_id: string; name: string; value: string }[];
  inputs: unknown[];
  attempts?: { task_id: string; name: string; failed: number | string; last_failure: string | null }[];
}

/** A memo of the store: a step's value (its run, index, previous run and attempt) or a sleep's wake time. */
export interface StepMemo {
  run?: string;
  i?: number;
  prev?: string | null;
  attempt?: number;
  wakeAt?: number;
}

/** The failed attempts of a step the store counts, and the last failure (final when it gave up). */
export interface AttemptCount {
  failed: number;
  last: { final?: boolean } | undefined;
}

/** One run of a task in the log: its start, end, process, and the steps it finished and saved. */
export interface RunView {
  start: LogLine;
  end: LogLine | undefined;
  pid: number;
  ends: Map<string, LogLine>;
  saved: Map<string, LogLine>;
}

/** A kill of the driver: where, which process, and the task, run and step it aimed at. */
export interface Kill {
  point: string;
  pid: number | undefined;
  t: number;
  task?: string;
  run?: string;
  step?: string;
}

/** The figures of the durable workload a section reports. */
export interface DurableStats {
  retryTasks: number;
  sleepTasks: number;
  gaveUp: number;
  failedAttempts: number;
  repeatedAttempts: number;
  retries: number;
  retriesElsewhere: number;
  sleeps: number;
  sleepsElsewhere: number;
  wakeLate?: number[];
  statusSeen: number;
}
