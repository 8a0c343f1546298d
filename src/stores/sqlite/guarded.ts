// Runs one driver call with driver errors (busy, closed database) translated into StoreUnavailableError.
import { StoreUnavailableError } from '../../tasks/errors.js';

export function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) throw new StoreUnavailableError(code);
    if (err instanceof TypeError && /not open/i.test(err.message)) throw new StoreUnavailableError('closed');
    throw err;
  }
}
