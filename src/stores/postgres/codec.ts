// How the PostgreSQL store seals payload columns: the shared sealing, plus a cache of the tasks' flags so that a
// write to an existing task rarely has to read its flag first.
import type { PayloadSealing } from '../payload-sealing.js';

export interface PayloadCodec extends PayloadSealing {
  /** The sealer of an existing task, looking its flag up (once) when only some tasks are sealed. */
  sealerOf(taskId: string): Promise<Sealer>;
  /** Records a task's flag seen in a row (creation, claim), sparing a lookup later. */
  remember(taskId: string, sealed: boolean): void;
}

/**
 * Seals `json` kept `at` (sealedAt) as the task's payloads are sealed (identity for an unsealed task); `seals` tells
 * which.
 */
export type Sealer = ((json: string, at: string) => string) & { readonly seals: boolean };

const CACHE_LIMIT = 10_000;
const unsealed: Sealer = Object.assign((json: string) => json, { seals: false });

/** `isSealed` reads a task's flag; the flag never changes, so answers are cached (bounded). */
export function createPayloadCodec(
  sealing: PayloadSealing,
  isSealed: (taskId: string) => Promise<boolean | undefined>,
): PayloadCodec {
  if (!sealing.enabled) return { ...sealing, sealerOf: async () => unsealed, remember: () => undefined };
  const known = new Map<string, boolean>();
  const seal: Sealer = Object.assign((json: string, at: string) => sealing.sealFor(true, json, at), {
    seals: true,
  });
  const remember = (taskId: string, sealed: boolean): void => {
    if (sealing.sealsAll) return;
    if (known.size >= CACHE_LIMIT) known.clear();
    known.set(taskId, sealed);
  };
  return {
    ...sealing,
    async sealerOf(taskId) {
      let sealed = sealing.sealsAll ? true : known.get(taskId);
      if (sealed === undefined) {
        const found = await isSealed(taskId);
        if (found !== undefined) remember(taskId, found);
        sealed = found ?? true; // an unknown task refuses the write anyway; sealing is the safe default
      }
      return sealed ? seal : unsealed;
    },
    remember,
  };
}
