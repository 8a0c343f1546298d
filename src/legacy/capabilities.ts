// Missing client capabilities as 2025-11-25 clients understand them: that revision has no -32021, so the core's
// error becomes the legacy error for what is actually missing, and says how to get past it.
import { ErrorCode } from '../wire/codes.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { TASKS_EXTENSION } from '../wire/meta-keys.js';
import { ProtocolError } from '../wire/protocol-error.js';

/**
 * The legacy form of a core error. Only the tasks extension missing: the tool runs only as a task, so the call needs
 * `params.task` (-32601, as 2025-11-25 servers answer). Client capabilities missing (elicitation, sampling, roots):
 * -32600 naming them, with `data.requiredCapabilities` in the 2025-11-25 capability shape. Anything else as it is.
 */
export function toLegacyError(err: ProtocolError): ProtocolError {
  if (err.code !== ErrorCode.MissingRequiredClientCapability) return err;
  const data = isJsonObject(err.data) ? err.data : {};
  const required: JsonObject = isJsonObject(data.requiredCapabilities) ? data.requiredCapabilities : {};
  const { extensions, ...client } = required;
  const needsTask = isJsonObject(extensions) && Object.hasOwn(extensions, TASKS_EXTENSION);
  const names = Object.keys(client);
  if (names.length === 0) {
    if (needsTask) {
      return new ProtocolError(ErrorCode.MethodNotFound, 'This tool must be called as a task (params.task)');
    }
    return new ProtocolError(ErrorCode.InvalidRequest, err.message);
  }
  const what = names.map((n) => `'${n}'`).join(' and ');
  const also = needsTask ? ', and call the tool as a task (params.task)' : '';
  return new ProtocolError(
    ErrorCode.InvalidRequest,
    `This request needs the client capability ${what}: declare it in initialize's capabilities${also}`,
    { requiredCapabilities: client },
  );
}
