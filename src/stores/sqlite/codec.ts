// How the SQLite store seals payload columns: the shared sealing, plus the sealer of an existing task, whose flag
// is read from its row when only some tasks are sealed.
import type { PayloadSealing } from '../payload-sealing.js';

export interface PayloadCodec extends PayloadSealing {
  /** Seals `json`, kept `at` (sealedAt), for the existing task `taskId` as its payloads were sealed at creation. */
  seal(taskId: string, json: string, at: string): string;
  /** Whether the existing task's payloads are sealed. */
  sealsTask(taskId: string): boolean;
}

/** `isSealed` reads a task's flag (inside the writing transaction, on the same connection). */
export function createPayloadCodec(
  sealing: PayloadSealing,
  isSealed: (taskId: string) => boolean,
): PayloadCodec {
  if (!sealing.enabled) return { ...sealing, seal: (_id, json) => json, sealsTask: () => false };
  const sealsTask = (id: string): boolean => sealing.sealsAll || isSealed(id);
  return { ...sealing, seal: (id, json, at) => sealing.sealFor(sealsTask(id), json, at), sealsTask };
}
