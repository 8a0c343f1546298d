// Driver errors become StoreUnavailableError with a readable reason; pg error objects never leave this folder.
import { StoreUnavailableError } from '../../tasks/errors.js';

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection lost',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

// SQLSTATE classes and codes (https://www.postgresql.org/docs/current/errcodes-appendix.html).
const SQLSTATE_REASONS: Record<string, string> = {
  '57014': 'statement timeout',
  '57P01': 'server shutting down',
  '57P02': 'server crashed',
  '57P03': 'server not accepting connections yet',
  '53300': 'too many connections',
  '53100': 'disk full',
  '40001': 'serialization failure',
  '40P01': 'deadlock detected',
  '23505': 'duplicate key',
  '42501': 'permission denied',
  '28P01': 'authentication failed',
  '28000': 'authorization failed',
  '3D000': 'database does not exist',
};
const SQLSTATE_CLASS_REASONS: Record<string, string> = {
  '08': 'connection failure',
  '53': 'insufficient resources',
  '55': 'object not in prerequisite state',
  '22': 'invalid data',
  '23': 'integrity constraint violated',
  '42': 'schema mismatch (are migrations applied?)',
};

const SETUP_CLASSES = new Set(['28', '3D', '42']);

/**
 * Answers that mean the server cannot serve yet, not that it refuses: starting up, shutting down, crashed, out of
 * connections or resources, a connection failure, a statement that timed out. Calls may succeed later unchanged.
 */
const UNREACHABLE_STATES = new Set(['57P01', '57P02', '57P03', '57014']);
const UNREACHABLE_CLASSES = new Set(['08', '53']);

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  address?: unknown;
  port?: unknown;
  severity?: unknown;
  errors?: unknown;
}

/** The SQLSTATE of a server error, if this is one. */
export function sqlState(err: unknown): string | undefined {
  const e = err as ErrorFields | null;
  if (e === null || typeof e !== 'object') return undefined;
  return typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string'
    ? e.code
    : undefined;
}

/** Why the driver failed, and whether the server did not answer (or could not serve yet) rather than refused. */
function reasonOf(err: unknown): { reason: string; unreachable: boolean } {
  const e = (err ?? {}) as ErrorFields;
  const state = sqlState(err);
  if (state !== undefined) {
    const reason = SQLSTATE_REASONS[state] ?? SQLSTATE_CLASS_REASONS[state.slice(0, 2)] ?? 'server error';
    // Set-up problems (schema, privileges, login) are fixed by reading the server's words; these carry no data.
    const detail =
      SETUP_CLASSES.has(state.slice(0, 2)) && typeof e.message === 'string' ? `: ${e.message}` : '';
    const unreachable = UNREACHABLE_STATES.has(state) || UNREACHABLE_CLASSES.has(state.slice(0, 2));
    return { reason: `${reason} (SQLSTATE ${state})${detail}`, unreachable };
  }
  // Node reports a failed dual-stack connect as an AggregateError of the attempts.
  const first = Array.isArray(e.errors) ? (e.errors[0] as ErrorFields | undefined) : undefined;
  const code = typeof e.code === 'string' ? e.code : first?.code;
  if (typeof code === 'string' && NETWORK_REASONS[code] !== undefined) {
    const at = first ?? e;
    const where = typeof at.address === 'string' ? ` (${at.address}:${String(at.port)})` : '';
    return { reason: `${NETWORK_REASONS[code]}${where}`, unreachable: true };
  }
  const message = typeof e.message === 'string' ? e.message : '';
  if (/timeout/i.test(message)) return { reason: 'connection or query timed out', unreachable: true };
  if (/terminated|ended|closed|not queryable/i.test(message))
    return { reason: 'connection lost', unreachable: true };
  return { reason: typeof code === 'string' ? code : 'database error', unreachable: false };
}

/** Maps anything thrown by the driver to StoreUnavailableError; our own domain errors pass through. */
export function translate(err: unknown): StoreUnavailableError {
  if (err instanceof StoreUnavailableError) return err;
  const { reason, unreachable } = reasonOf(err);
  return new StoreUnavailableError(reason, unreachable);
}

/** True for errors about the data of one statement (not the connection): worth retrying row by row. */
export function isDataError(err: unknown): boolean {
  const state = sqlState(err);
  return state !== undefined && (state.startsWith('22') || state.startsWith('23'));
}
