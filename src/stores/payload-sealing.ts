// Payload sealing for both stores: whether a task's payloads are encrypted is decided once, at its creation, and
// kept in its `sealed` column; every payload of the task is then sealed (or not) the same way.
import type { PayloadCipher } from '../tasks/payload-cipher.js';
import type { NewTask } from '../tasks/task.js';

/** The store options that choose what is sealed (both stores take them). */
export interface PayloadSealingOptions {
  /** Encrypts arguments, input requests and answers, steps, results and errors at rest. */
  cipher?: PayloadCipher;
  /** With a cipher: seal every task (default) or only tasks of tools marked sensitive. */
  encrypt?: 'all' | 'sensitive';
}

export interface PayloadSealing {
  /** False without a cipher: nothing is sealed, and no task's flag needs reading. */
  readonly enabled: boolean;
  /** Every task is sealed: a task's flag never needs reading. */
  readonly sealsAll: boolean;
  /** Whether a new task's payloads are sealed. */
  sealsNew(task: NewTask): boolean;
  /** Seals `json` for a task whose sealed flag is known. */
  sealFor(sealed: boolean, json: string): string;
  /** Reverses sealFor; plaintext passes through. */
  open(stored: string): string;
}

const identity = (stored: string): string => stored;

export function createPayloadSealing({ cipher, encrypt = 'all' }: PayloadSealingOptions): PayloadSealing {
  if (cipher === undefined) {
    return {
      enabled: false,
      sealsAll: false,
      sealsNew: () => false,
      sealFor: (_s, json) => json,
      open: identity,
    };
  }
  const sealsAll = encrypt === 'all';
  return {
    enabled: true,
    sealsAll,
    sealsNew: (task) => sealsAll || task.sensitive === true,
    sealFor: (sealed, json) => (sealed ? cipher.seal(json) : json),
    open: (stored) => cipher.open(stored),
  };
}
