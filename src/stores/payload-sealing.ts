// Payload sealing for both stores: whether a task's payloads are encrypted is decided once, at its creation, and
// kept in its `sealed` column; every payload of the task is then sealed (or not) the same way.
import { isSealedValue, type PayloadCipher } from '../tasks/payload-cipher.js';
import type { JsonObject, NewTask } from '../tasks/task.js';

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
  /** Seals `json`, kept `at` (sealedAt), for a task whose sealed flag is known. */
  sealFor(sealed: boolean, json: string, at: string): string;
  /** Reverses sealFor for a value kept `at`; plaintext passes through. */
  open(stored: string, at: string): string;
  /**
   * A task's concurrency, rate limit or debounce key as kept: a key computed from the call (derived) of a sealed task
   * as a keyed digest (`digest:…`), any other as given. `what` names the key in the error of a cipher without
   * digest().
   */
  concurrencyKey(sealed: boolean, key: string, derived: boolean, what?: string): string;
}

/**
 * Where a sealed value is kept, bound into its ciphertext: the table and column, the row's task (or session), and
 * for tables with several rows per task, the row's name or key. A value copied anywhere else no longer opens.
 */
export const sealedAt = (column: string, id: string, name?: string): string =>
  JSON.stringify(name === undefined ? [column, id] : [column, id, name]);

/** Opens a value kept at a place (identity without a cipher). */
export type Opener = (stored: string, at: string) => string;

const identity: Opener = (stored) => stored;

export function createPayloadSealing({ cipher, encrypt = 'all' }: PayloadSealingOptions): PayloadSealing {
  if (cipher === undefined) {
    return {
      enabled: false,
      sealsAll: false,
      sealsNew: () => false,
      sealFor: (_s, json) => json,
      open: identity,
      concurrencyKey: (_s, key) => key,
    };
  }
  const sealsAll = encrypt === 'all';
  return {
    enabled: true,
    sealsAll,
    sealsNew: (task) => sealsAll || task.sensitive === true,
    sealFor: (sealed, json, at) => (sealed ? cipher.seal(json, at) : json),
    open: (stored, at) => cipher.open(stored, at),
    concurrencyKey(sealed, key, derived, what = 'a concurrency key') {
      if (!sealed || !derived) return key;
      if (cipher.digest === undefined)
        throw new Error(`${what} computed from a call needs a cipher with digest() for sealed tasks`);
      return `digest:${cipher.digest(key)}`;
    },
  };
}

/** A task's status message as kept (sealed with the task's payloads). */
export const sealStatus = (sealing: PayloadSealing, sealed: boolean, id: string, text: string): string =>
  sealed ? sealing.sealFor(true, JSON.stringify(text), sealedAt('tasks.status_message', id)) : text;

/** A task's status message as read. */
export function openStatus(id: string, stored: string | null, open: Opener): string | undefined {
  if (stored === null) return undefined;
  // Sealed status texts are kept as JSON, told from plain ones (unsealed tasks, earlier releases) by their prefix.
  return isSealedValue(stored)
    ? (JSON.parse(open(stored, sealedAt('tasks.status_message', id))) as string)
    : stored;
}

/**
 * A JSON value kept in a JSON column (client capabilities, legacy session state and relayed answers): as is, or
 * sealed, as a JSON string holding the sealed text (so that the column stays JSON, as PostgreSQL's jsonb needs).
 */
export const sealJson = (sealing: PayloadSealing, sealed: boolean, at: string, value: unknown): string =>
  JSON.stringify(sealed ? sealing.sealFor(true, JSON.stringify(value), at) : value);

/** A JSON column's value as read: `stored` is its JSON text (SQLite) or its parsed value (PostgreSQL). */
export function openJson<T>(stored: T | string, at: string, open: Opener): T {
  let value: unknown = stored;
  if (typeof value === 'string' && !isSealedValue(value)) value = JSON.parse(value);
  if (typeof value === 'string') return JSON.parse(open(value, at)) as T;
  return value as T;
}

/** A task's client capabilities as kept (sealed with the task's payloads). */
export const sealCaps = (sealing: PayloadSealing, sealed: boolean, id: string, caps: JsonObject): string =>
  sealJson(sealing, sealed, sealedAt('tasks.client_caps', id), caps);

/** A task's client capabilities as read. */
export const openCaps = (id: string, stored: JsonObject | string, open: Opener): JsonObject =>
  openJson(stored, sealedAt('tasks.client_caps', id), open);

/** A status message as kept, given the task's sealer (PostgreSQL): sealed when the task is. */
export const statusFor = (
  seal: ((json: string, at: string) => string) & { readonly seals: boolean },
  id: string,
  text: string | null | undefined,
): string | null =>
  text === null || text === undefined
    ? null
    : seal.seals
      ? seal(JSON.stringify(text), sealedAt('tasks.status_message', id))
      : text;

/** A sealed JSON column of a task as read: undefined when empty. */
export const openColumn = <T>(
  stored: string | null,
  column: string,
  id: string,
  open: Opener,
): T | undefined => (stored === null ? undefined : (JSON.parse(open(stored, sealedAt(column, id))) as T));
