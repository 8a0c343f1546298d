// What the `durable-mcp admin` commands say when the operator API refuses or cannot be reached, and their exit codes.
import type { AdminErrorCode } from '../admin/reply.js';
import { AdminApiError, AdminTransportError } from './admin-api.js';
import { EXIT } from './client-flags.js';
import { oneLine, printErr } from './terminal-text.js';

const OPERATOR_HINT =
  'the operator role is granted by the server: "roles": ["operator"] in its tokens.json, or its ' +
  '--jwt-operator-scope/--jwt-operator-claim (docs/security.md#operators)';

/** Why an action was refused (409), in words. */
const CONFLICTS: Partial<Record<AdminErrorCode, (id: string) => string>> = {
  terminal: (id) => `task ${id} is already finished: nothing to cancel`,
  not_failed: (id) =>
    `task ${id} neither failed nor ended in a tool error: only those can be retried (admin tasks get ${id})`,
  sealed: (id) =>
    `task ${id} cannot be retried here: its payloads are sealed with a key this server does not hold`,
  not_terminal: (id) => `task ${id} is not finished: only finished tasks can be purged (cancel it first)`,
};

/** The words and exit code of a refusal; `taskId` when the request was about one task (its 404 means not found). */
function refusal(err: AdminApiError, base: string, taskId: string | undefined): [string, number] {
  switch (err.status) {
    case 400:
      return [oneLine`the server refused the request: ${err.message}`, EXIT.usage];
    case 401:
      return [
        `not authenticated (401): the admin commands need an operator's token (--token or $DURABLE_MCP_TOKEN); ${OPERATOR_HINT}`,
        EXIT.serverError,
      ];
    case 403:
      if (err.code === 'csrf')
        return [oneLine`the server refused the action's CSRF token (403): ${err.message}`, EXIT.serverError];
      return [
        `forbidden (403): this token does not have the operator role; ${OPERATOR_HINT}`,
        EXIT.serverError,
      ];
    case 404:
      if (taskId !== undefined) return [`task not found: ${taskId}`, EXIT.failed];
      return [
        `no operator API at ${base} (404): is --url the right server, and does it offer one?`,
        EXIT.serverError,
      ];
    case 409: {
      const say = err.code === undefined ? undefined : CONFLICTS[err.code as AdminErrorCode];
      const id = taskId ?? '?';
      return [say === undefined ? oneLine`task ${id}: ${err.message} (409)` : say(id), EXIT.failed];
    }
    case 410:
    case 422:
      return [oneLine`task ${taskId ?? '?'}: ${err.message} (${err.status})`, EXIT.failed];
    case 429:
      return [oneLine`the server refused the request for now (429): ${err.message}`, EXIT.failed];
    default:
      return [oneLine`server error ${err.status}: ${err.message}`, EXIT.serverError];
  }
}

/** Prints why a request failed and returns the exit code; anything not from the API is rethrown. */
export function reportAdminError(err: unknown, base: string, taskId?: string): number {
  if (err instanceof AdminTransportError) {
    printErr(oneLine`error: ${err.message}`);
    return EXIT.serverError;
  }
  if (!(err instanceof AdminApiError)) throw err;
  const [message, code] = refusal(err, base, taskId);
  printErr(message);
  return code;
}
