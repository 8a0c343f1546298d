// Turns new tasks into the parallel arrays that the multi-row insert unnests.
import type { EncodedTask } from '../encode-task.js';

export { encodeTask, type EncodedTask } from '../encode-task.js';

/** The statements of a batch's insert (sql/creation.ts): without creation-time answers, and with them. */
interface InsertStatements {
  insertTasks: string;
  insertTasksWithAnswers: string;
}

/**
 * The byte quota the insert checks ($28–$30, sql/creation.ts): per task its limit, the bytes it adds and what this
 * instance's batches in flight add for its owner, or null; empty arrays: no check.
 */
export interface QuotaParams {
  limits: (number | null)[];
  adding: (number | null)[];
  pending: (number | null)[];
}

const NO_QUOTA: QuotaParams = { limits: [], adding: [], pending: [] };

/** The insert of a batch and its parameters: the statement with answers only when some task carries them. */
export function insertOf(
  q: InsertStatements,
  tasks: readonly EncodedTask[],
  quota: QuotaParams = NO_QUOTA,
): [string, unknown[]] {
  const params = encodeTasks(tasks);
  params.push(quota.limits, quota.adding, quota.pending);
  if (!tasks.some((t) => t.answers.length > 0)) return [q.insertTasks, params];
  const answers = tasks.flatMap((t) =>
    t.answers.map(([key, answer]) => ({ id: t.id, key, answer, at: t.createdAt })),
  );
  params.push(
    answers.map((a) => a.id),
    answers.map((a) => a.key),
    answers.map((a) => a.answer),
    answers.map((a) => a.at),
  );
  return [q.insertTasksWithAnswers, params];
}

/** Parameters $1–$27 of the insert, in its order (one array per column). */
function encodeTasks(tasks: readonly EncodedTask[]): unknown[] {
  return [
    tasks.map((t) => t.id),
    tasks.map((t) => t.tenant),
    tasks.map((t) => t.principal),
    tasks.map((t) => t.tool),
    tasks.map((t) => t.args),
    tasks.map((t) => t.statusMessage),
    tasks.map((t) => t.createdAt),
    tasks.map((t) => t.ttlMs),
    tasks.map((t) => t.pollIntervalMs),
    tasks.map((t) => t.replay),
    tasks.map((t) => t.caps),
    tasks.map((t) => t.sealed),
    tasks.map((t) => t.idempotencyKey),
    tasks.map((t) => t.toolVersion),
    tasks.map((t) => t.concurrencyKey),
    tasks.map((t) => t.concurrencyLimit),
    tasks.map((t) => t.concurrencyHold),
    tasks.map((t) => t.priority),
    tasks.map((t) => t.rateKey),
    tasks.map((t) => t.rateLimit),
    tasks.map((t) => t.ratePeriodMs),
    tasks.map((t) => t.debounceKey),
    tasks.map((t) => t.wakeAt),
    tasks.map((t) => t.traceParent),
    tasks.map((t) => t.traceState),
    tasks.map((t) => t.parentId),
    tasks.map((t) => (t.detached ? true : null)),
  ];
}
