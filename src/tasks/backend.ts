// The durable backend of a server: everything that outlives a process, opened together so that the library and the
// CLI handle it the same way (one requestState secret per backend, not per process).
import { randomBytes } from 'node:crypto';
import { createPayloadCipher, parseKeyring, type PayloadCipher } from './payload-cipher.js';
import type { SessionStore } from './sessions.js';
import type { TaskStore } from './store.js';

export interface Backend {
  /** Tasks, their steps, inputs and leases. */
  readonly tasks: TaskStore;
  /** Sessions of the 2025-11-25 wire, shared by every process on the backend. */
  readonly sessions?: SessionStore;
  /**
   * The secret that seals MRTR `requestState`: the one the backend stores (created on first use, so that every
   * replica and every restart shares it), unless the backend was opened with its own.
   */
  readonly stateSecret: string;
  /** Where the data lives, for logs (passwords hidden). */
  readonly description: string;
  /** The PostgreSQL schema holding the tables (none for SQLite), for logs. */
  readonly schema?: string;
  /** The highest migration the store had applied once opened (its own schema version), for logs. */
  readonly migration?: number;
  /** Migrations the store has that this release does not know: a newer release's, while rolled back (for logs). */
  readonly newerMigrations?: readonly number[];
  /** Closes the tasks and sessions stores. */
  close(): Promise<void>;
}

/** Options every backend takes. */
export interface BackendOptions {
  /** At-rest encryption already built (instead of `encryptionKey`). */
  cipher?: PayloadCipher;
  /**
   * Encrypts arguments, input requests and answers, steps, results and errors at rest: a keyring spec, the same
   * text as `durable-mcp serve --encryption-key` (`kid:base64key[,kid:base64key…]`, 32-byte keys, the first one
   * encrypts).
   */
  encryptionKey?: string;
  /** With an encryption key: seal every task (default) or only tasks of tools marked sensitive. */
  encrypt?: 'all' | 'sensitive';
  /** Seal `requestState` with this secret instead of the stored one (e.g. from a secret manager). */
  stateSecret?: string;
}

const freshSecret = (): string => randomBytes(32).toString('base64');

/** The cipher a backend's options ask for (a keyring spec is parsed here, with errors that name the option). */
export function backendCipher(options: BackendOptions): PayloadCipher | undefined {
  if (options.cipher !== undefined) return options.cipher;
  if (options.encryptionKey === undefined) return undefined;
  try {
    return createPayloadCipher(parseKeyring(options.encryptionKey));
  } catch (err) {
    throw new Error(`encryptionKey: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export { freshSecret };

/** Where a backend keeps the requestState secret: in clear without a cipher, sealed with it otherwise. */
export const STATE_SECRET_KEY = 'request_state_secret';
export const SEALED_STATE_SECRET_KEY = 'request_state_secret_sealed';

/**
 * The sealed secret to store on first use with a cipher: the one stored in clear before encryption was turned on (so
 * that rounds in flight still open), or a fresh one.
 */
export const sealedSecretFor = (cipher: PayloadCipher, plain: string | undefined): string =>
  cipher.seal(plain ?? freshSecret(), SECRET_AT);

/** Where the sealed secret is kept, bound into its ciphertext. */
export const SECRET_AT = `server_meta.value/${SEALED_STATE_SECRET_KEY}`;
