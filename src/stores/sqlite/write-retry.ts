// Write attempts on a SQLite file shared with other processes: a locked file is waited for asynchronously (the event
// loop keeps serving), up to a deadline; driver errors leave as StoreUnavailableError.
import { performance } from 'node:perf_hooks';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { backoffMs } from '../../pacing/backoff.js';

const codeOf = (err: unknown): string | undefined => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
};

/** Another connection holds the lock: worth waiting for. */
export const isBusy = (err: unknown): boolean => /^SQLITE_(BUSY|LOCKED)/.test(codeOf(err) ?? '');

/**
 * An error about the rows of one statement (a constraint, a value), not about the file: retrying the rows one by
 * one makes sense. Errors thrown by our own code while preparing a row count too.
 */
export function isDataError(err: unknown): boolean {
  if (err instanceof StoreUnavailableError) return err.cause !== undefined && isDataError(err.cause);
  const code = codeOf(err);
  if (code === undefined) return !(err instanceof TypeError && /not open/i.test(err.message));
  return /^SQLITE_(CONSTRAINT|MISMATCH|TOOBIG|RANGE)/.test(code);
}

const REASONS: Record<string, string> = {
  SQLITE_FULL: 'SQLITE_FULL (disk or database full)',
  SQLITE_READONLY: 'SQLITE_READONLY (file not writable)',
  SQLITE_CANTOPEN: 'SQLITE_CANTOPEN (file cannot be opened)',
  SQLITE_CORRUPT: 'SQLITE_CORRUPT (database file damaged)',
};

/** Driver errors become StoreUnavailableError (the driver's error kept as `cause`); everything else passes through. */
export function translate(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  const code = codeOf(err);
  if (code !== undefined) {
    const primary = /^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code;
    const reason = REASONS[primary] ?? (isBusy(err) ? 'SQLITE_BUSY' : code);
    return Object.assign(new StoreUnavailableError(reason), { cause: err });
  }
  if (err instanceof TypeError && /not open/i.test(err.message))
    return new StoreUnavailableError('store is closed');
  return err;
}

export interface WriteRetryOptions {
  /** How long one write may wait for the lock in all (default 5000 ms). */
  deadlineMs?: number;
  isClosed?: () => boolean;
}

const MIN_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 200;

/**
 * Returns `retry(attempt)`: runs the synchronous `attempt` and, while the file is locked by another connection,
 * tries again after a backoff shared by every caller (one attempt per window for the whole store, so that many
 * waiting writers do not each block the event loop for the connection's short busy_timeout).
 */
export function createWriteRetry(options: WriteRetryOptions = {}) {
  const deadlineMs = options.deadlineMs ?? 5_000;
  let quietUntil = 0;
  let failures = 0;
  return async function retry<T>(attempt: () => T): Promise<T> {
    const deadline = performance.now() + deadlineMs;
    // Bounded by the deadline: every turn either returns, throws, or sleeps at least 1 ms.
    for (;;) {
      if (options.isClosed?.() === true) throw new StoreUnavailableError('store is closed');
      if (performance.now() >= quietUntil) {
        try {
          const value = attempt();
          failures = 0;
          return value;
        } catch (err) {
          if (!isBusy(err)) throw translate(err);
          quietUntil = performance.now() + backoffMs(failures++, MIN_BACKOFF_MS, MAX_BACKOFF_MS);
        }
      }
      const left = deadline - performance.now();
      if (left <= 0) throw new StoreUnavailableError('SQLITE_BUSY');
      const wait = Math.min(left, Math.max(1, quietUntil - performance.now()) + Math.random() * 3);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
}
