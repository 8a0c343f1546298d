// Which process this is, in the words logs and leases share: `<host>:<pid>`, the `instance` of every log line and the
// start of every lease owner id, so an operator matches a task's lease to the replica that holds it.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** A host name's longest part kept (a DNS label's limit); a longer one is cut. */
const MAX_HOST = 63;

/**
 * The host part: letters, digits, `.`, `_` and `-` kept, anything else (a space, a control character, a colon that
 * would split the id) as `_`, at most 63 characters: safe to print and to parse at its last colons.
 */
export const instanceHost = (host: string): string =>
  host.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, MAX_HOST) || 'unknown';

/** This process: `<host>:<pid>` (e.g. `vm-3:15943`), at most 63 + 1 + 7 characters. */
export const processInstance = (): string => `${instanceHost(hostname())}:${process.pid}`;

/** A new worker's id, unique among the workers of every process: `<host>:<pid>:w_<12 hex digits>`. */
export const newWorkerId = (): string => `${processInstance()}:w_${randomBytes(6).toString('hex')}`;
