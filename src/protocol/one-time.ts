// One-time MRTR requestState: the nonce a state carries, and the record of nonces already acted on.
import { randomBytes } from 'node:crypto';
import { traitsOf } from '../wire/method-traits.js';

/**
 * Records `key` as used until `expiresAt`: true the first time, false on any later call with the same key. A server
 * behind several replicas gives every one the same record (the task store's `consumeOnce`).
 */
export type ConsumeOnce = (key: string, expiresAt: number) => Promise<boolean>;

/**
 * Which rounds are one-time (`oneTime` in the method traits): those of tools/call, whose handler (or `prepare`, which
 * creates a task) may act on the world. Rounds of prompts/get and resources/read only read, and may be repeated
 * while their state lives.
 */
export const isOneTimeMethod = (method: string): boolean => traitsOf(method)?.oneTime === true;

/** A new nonce for a one-time requestState (128 random bits). */
export const newNonce = (): string => randomBytes(16).toString('base64url');

/** The record's key of a nonce (one namespace of the store's one-time keys). */
export const nonceKey = (nonce: string): string => `request-state:${nonce}`;

/** How many insertions between two sweeps of the expired entries of a process-local record. */
const SWEEP_EVERY = 256;

/** A record kept in this process only: for a server without a task store (one process, no replicas). */
export function createLocalConsumeOnce(now: () => number): ConsumeOnce {
  const used = new Map<string, number>();
  let sinceSweep = 0;
  return async (key, expiresAt) => {
    if (++sinceSweep >= SWEEP_EVERY) {
      sinceSweep = 0;
      const at = now();
      for (const [k, until] of used) if (until <= at) used.delete(k);
    }
    if (used.has(key)) return false;
    used.set(key, expiresAt);
    return true;
  };
}
