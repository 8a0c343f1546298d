// Turns new tasks into the parallel arrays that the multi-row insert unnests.
import type { EncodedTask } from '../encode-task.js';

export { encodeTask, type EncodedTask } from '../encode-task.js';

/** Parameters of `insertTasks`, in its order. */
export function encodeTasks(tasks: readonly EncodedTask[]): unknown[] {
  const answers = tasks.flatMap((t) =>
    t.answers.map(([key, answer]) => ({ id: t.id, key, answer, at: t.createdAt })),
  );
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
    answers.map((a) => a.id),
    answers.map((a) => a.key),
    answers.map((a) => a.answer),
    answers.map((a) => a.at),
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
