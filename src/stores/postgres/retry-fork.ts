// An operator's retry on PostgreSQL, inside the transaction that holds the task's row lock: read what is copied,
// seal it for the new task (retry-fork.ts), and insert the new task with its steps and answers in one statement.
import type { AdminRecordedStep, AdminRetryResult } from '../../tasks/admin.js';
import type { JsonObject, TaskStatus } from '../../tasks/task.js';
import { planRetry, type ForkRows } from '../retry-fork.js';
import type { StoreContext } from './context.js';
import type { Run } from './db.js';
import { toNumber, toNumberOrNull } from './rows.js';

type Int8 = string | number;

interface ForkSourceRow extends Record<string, unknown> {
  id: string;
  status: TaskStatus;
  tool_error: boolean;
  sealed: boolean;
  args: string;
  client_caps: JsonObject | string;
  /** `[name, value, seq, started_at, saved_at]`, in the order done. */
  steps: [string, string, number | null, Int8 | null, Int8 | null][];
  /** `[key, request, answer, asked_at, answered_at]` of answered inputs, in the order asked. */
  inputs: [string, string | null, string, Int8, Int8 | null][];
}

/** The parameters of insertFork after the task retried ($1). */
const insertParams = (fork: ForkRows, now: number): unknown[] => [
  fork.id,
  fork.args,
  fork.statusMessage,
  now,
  fork.caps,
  fork.sealed,
  fork.steps.map((s) => s.name),
  fork.steps.map((s) => s.value),
  fork.steps.map((s) => s.seq),
  fork.steps.map((s) => s.startedAt),
  fork.steps.map((s) => s.savedAt),
  fork.inputs.map((i) => i.key),
  fork.inputs.map((i) => i.request),
  fork.inputs.map((i) => i.answer),
  fork.inputs.map((i) => i.askedAt),
  fork.inputs.map((i) => i.answeredAt),
];

/** Makes the new task of a retry of `id` (in scope and locked by the caller). */
export async function retryFork(
  { q, codec }: StoreContext,
  run: Run,
  id: string,
  now: number,
  record?: AdminRecordedStep,
): Promise<AdminRetryResult> {
  const [row] = await run<ForkSourceRow>(q.admin.forkSource, [id]);
  if (row === undefined) return { ok: false, reason: 'not_found' };
  const source = {
    id,
    sealed: row.sealed,
    args: row.args,
    caps: row.client_caps,
    steps: row.steps.map(([name, value, seq, startedAt, savedAt]) => ({
      name,
      value,
      seq,
      startedAt: toNumberOrNull(startedAt),
      savedAt: toNumberOrNull(savedAt),
    })),
    inputs: row.inputs.map(([key, request, answer, askedAt, answeredAt]) => ({
      key,
      request,
      answer,
      askedAt: toNumber(askedAt),
      answeredAt: toNumberOrNull(answeredAt),
    })),
  };
  const recorded = record === undefined ? undefined : { ...record, at: now };
  const plan = planRetry(source, { status: row.status, toolError: row.tool_error }, codec, recorded);
  if (!plan.ok) return plan;
  const { fork } = plan;
  await run(q.admin.insertFork, [id, ...insertParams(fork, now)]);
  codec.remember(fork.id, fork.sealed);
  return { ok: true, taskId: fork.id };
}
