// Turns new tasks into the parallel arrays that the multi-row insert unnests.
import type { NewTask } from '../../tasks/task.js';
import type { PayloadCodec } from './codec.js';

export interface EncodedTask {
  id: string;
  tenant: string;
  principal: string;
  tool: string;
  args: string;
  statusMessage: string | null;
  createdAt: number;
  ttlMs: number | null;
  pollIntervalMs: number | null;
  replay: boolean;
  caps: string;
  sealed: boolean;
  answers: [key: string, answer: string][];
  idempotencyKey: string | null;
}

/** Serialises (and seals) one task; throws for that task alone when its payload is not JSON. */
export function encodeTask(task: NewTask, codec: PayloadCodec): EncodedTask {
  const sealed = codec.sealsNew(task);
  return {
    id: task.id,
    tenant: task.owner.tenant,
    principal: task.owner.principal,
    tool: task.tool,
    args: codec.sealFor(sealed, JSON.stringify(task.args)),
    statusMessage: task.statusMessage ?? null,
    createdAt: task.createdAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs ?? null,
    replay: task.replayAfterCrash,
    caps: JSON.stringify(task.clientCapabilities),
    sealed,
    answers: Object.entries(task.answers).map(([key, value]) => [
      key,
      codec.sealFor(sealed, JSON.stringify(value)),
    ]),
    idempotencyKey: task.idempotencyKey ?? null,
  };
}

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
  ];
}
