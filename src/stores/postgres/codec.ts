// How payload columns are sealed at rest: per task, decided at creation and remembered in its `sealed` column.
import type { PayloadCipher } from '../../tasks/payload-cipher.js';
import type { NewTask } from '../../tasks/task.js';

export interface PayloadCodec {
  /** Whether a new task's payloads are sealed. */
  sealsNew(task: NewTask): boolean;
  /** Seals `json` for a task whose sealed flag is known. */
  sealFor(sealed: boolean, json: string): string;
  /** The sealer of an existing task, looking its flag up (once) when only some tasks are sealed. */
  sealerOf(taskId: string): Promise<(json: string) => string>;
  open(stored: string): string;
  /** Records a task's flag seen in a row (creation, claim), sparing a lookup later. */
  remember(taskId: string, sealed: boolean): void;
}

const CACHE_LIMIT = 10_000;

/** `isSealed` reads a task's flag; the flag never changes, so answers are cached (bounded). */
export function createPayloadCodec(
  cipher: PayloadCipher | undefined,
  encrypt: 'all' | 'sensitive',
  isSealed: (taskId: string) => Promise<boolean | undefined>,
): PayloadCodec {
  if (cipher === undefined) {
    return {
      sealsNew: () => false,
      sealFor: (_sealed, json) => json,
      sealerOf: async () => (json) => json,
      open: (stored) => stored,
      remember: () => undefined,
    };
  }
  const known = new Map<string, boolean>();
  const sealFor = (sealed: boolean, json: string): string => (sealed ? cipher.seal(json) : json);
  const remember = (taskId: string, sealed: boolean): void => {
    if (encrypt === 'all') return;
    if (known.size >= CACHE_LIMIT) known.clear();
    known.set(taskId, sealed);
  };
  return {
    sealsNew: (task) => encrypt === 'all' || task.sensitive === true,
    sealFor,
    async sealerOf(taskId) {
      let sealed = encrypt === 'all' ? true : known.get(taskId);
      if (sealed === undefined) {
        const found = await isSealed(taskId);
        if (found !== undefined) remember(taskId, found);
        sealed = found ?? true; // an unknown task refuses the write anyway; sealing is the safe default
      }
      return sealed ? (json) => cipher.seal(json) : (json) => json;
    },
    open: (stored) => cipher.open(stored),
    remember,
  };
}
