// At-rest encryption of task payloads (arguments, answers, steps, results): AES-256-GCM with key ids for rotation.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

export interface PayloadCipher {
  /**
   * Encrypts with the current key. `at` names where the value is kept (table, column, row): it is bound into the
   * additional data, so the ciphertext opens only there, never copied into another row or column.
   */
  seal(plain: string, at?: string): string;
  /**
   * Decrypts with the key named in the value, where it is kept (`at`, as sealed); plaintext written before encryption
   * was enabled passes through, and so does the row-unbound format of earlier releases.
   */
  open(stored: string, at?: string): string;
  readonly currentKeyId: string;
  /**
   * A keyed digest of `text` (the same for the same text under the same current key), for values that must be
   * compared but never kept in clear, such as concurrency keys computed from a call. Optional for ciphers of your own;
   * without it such values cannot be kept for sealed tasks.
   */
  digest?(text: string): string;
}

/** Sealed by earlier releases: the additional data is the key id alone. */
const UNBOUND = 'enc1.';
/** Bound to where the value is kept: the additional data is the key id and `at`. */
const BOUND = 'enc2.';

const aad = (prefix: string, id: string, at: string): Buffer =>
  Buffer.from(prefix === UNBOUND ? id : `${id}\u0000${at}`);

/**
 * Parses `kid:base64key[,kid:base64key…]` (each key 32 bytes). The first key encrypts; all of them decrypt,
 * so a rotation lists the new key first and keeps the old ones until nothing sealed with them remains.
 */
export function parseKeyring(spec: string): { id: string; key: Buffer }[] {
  const keys = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/=_-]+)$/.exec(entry);
      if (m === null) throw new Error('encryption key must look like kid:base64key');
      const key = Buffer.from(m[2] as string, 'base64');
      if (key.length !== 32)
        throw new Error(`encryption key ${m[1]} must be 32 bytes (base64 of 32 random bytes)`);
      return { id: m[1] as string, key };
    });
  if (keys.length === 0) throw new Error('no encryption key given');
  if (new Set(keys.map((k) => k.id)).size !== keys.length)
    throw new Error('encryption key ids must be unique');
  return keys;
}

export function createPayloadCipher(keys: { id: string; key: Buffer }[]): PayloadCipher {
  const current = keys[0];
  if (current === undefined) throw new Error('no encryption key given');
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  // A key of its own for digests, derived from the current key: digests reveal nothing of what seals.
  const digestKey = createHmac('sha256', current.key).update('durable-mcp digest key').digest();
  return {
    currentKeyId: current.id,
    digest: (text) => createHmac('sha256', digestKey).update(text, 'utf8').digest('base64url'),
    seal(plain, at = '') {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv);
      cipher.setAAD(aad(BOUND, current.id, at));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `${BOUND}${current.id}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(stored, at = '') {
      const prefix = stored.startsWith(BOUND) ? BOUND : stored.startsWith(UNBOUND) ? UNBOUND : undefined;
      if (prefix === undefined) return stored;
      const dot = stored.indexOf('.', prefix.length);
      const id = stored.slice(prefix.length, dot);
      const key = byId.get(id);
      if (key === undefined) throw new Error(`payload sealed with unknown key id "${id}"`);
      const raw = Buffer.from(stored.slice(dot + 1), 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAAD(aad(prefix, id, at));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

/** Whether a stored value is sealed (in either format). */
export const isSealedValue = (stored: string): boolean =>
  stored.startsWith(BOUND) || stored.startsWith(UNBOUND);
