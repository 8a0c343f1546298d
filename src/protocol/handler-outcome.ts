// A method handler's result or error as the dispatch's outcome: the result with the server's `_meta`.
import { META_SERVER_INFO } from '../wire/meta-keys.js';
import { toProtocolError } from '../wire/protocol-error.js';
import type { JsonObject } from '../wire/jsonrpc.js';
import type { ErrorOrigin } from '../wire/codes.js';
import type { ProtocolError } from '../wire/protocol-error.js';

/** What a dispatch answers: the handler's result, or the error and where it arose. */
export type DispatchOutcome =
  { ok: true; result: JsonObject } | { ok: false; error: ProtocolError; origin: ErrorOrigin };

/** A handler's error as the outcome (origin `handler`). */
export const handlerFailed = (err: unknown): DispatchOutcome => ({
  ok: false,
  error: toProtocolError(err),
  origin: 'handler',
});

/** A handler's result with the server's `_meta` (a result that is no object fails as the handler's error). */
export function answered(result: JsonObject, serverMeta: JsonObject): DispatchOutcome {
  try {
    const meta = result._meta as JsonObject | undefined;
    if (meta === undefined) result._meta = serverMeta;
    else if (meta[META_SERVER_INFO] === undefined) result._meta = { ...serverMeta, ...meta };
    return { ok: true, result };
  } catch (err) {
    return handlerFailed(err);
  }
}
