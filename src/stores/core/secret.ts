// The requestState secret as both backends keep it in `server_meta`: in clear without a cipher; with one, sealed (a
// clear one stored before encryption was turned on is sealed, so that rounds in flight still open, then dropped).
import {
  freshSecret,
  SEALED_STATE_SECRET_KEY,
  SECRET_AT,
  sealedSecretFor,
  STATE_SECRET_KEY,
} from '../../tasks/backend.js';
import type { PayloadCipher } from '../../tasks/payload-cipher.js';

/** `server_meta` through a synchronous driver (SQLite). */
export interface SyncMeta {
  read(key: string): string | undefined;
  /** The value kept under `key`, `create()`d first when there is none (the first writer wins). */
  getOrCreate(key: string, create: () => string): string;
  delete(key: string): void;
}

/** `server_meta` through an asynchronous driver (PostgreSQL). */
export type AsyncMeta = {
  [K in keyof SyncMeta]: (...args: Parameters<SyncMeta[K]>) => Promise<ReturnType<SyncMeta[K]>>;
};

type Maybe<T> = T | Promise<T>;
const then = <A, B>(value: Maybe<A>, next: (value: A) => Maybe<B>): Maybe<B> =>
  value instanceof Promise ? value.then(next) : next(value);

/** The stored requestState secret, created on first use. */
export function storedSecret(meta: SyncMeta, cipher: PayloadCipher | undefined): string;
export function storedSecret(meta: AsyncMeta, cipher: PayloadCipher | undefined): Promise<string>;
export function storedSecret(meta: SyncMeta | AsyncMeta, cipher: PayloadCipher | undefined): Maybe<string> {
  if (cipher === undefined) return meta.getOrCreate(STATE_SECRET_KEY, freshSecret);
  return then(meta.read(STATE_SECRET_KEY), (plain) =>
    then(
      meta.getOrCreate(SEALED_STATE_SECRET_KEY, () => sealedSecretFor(cipher, plain)),
      (sealed) =>
        then(plain === undefined ? undefined : meta.delete(STATE_SECRET_KEY), () =>
          cipher.open(sealed, SECRET_AT),
        ),
    ),
  );
}
