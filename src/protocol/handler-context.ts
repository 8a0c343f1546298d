// Builds the HandlerContext for one synchronous round of a tool, prompt or resource.
import { LOG_LEVELS, type LogLevel } from '../wire/meta-keys.js';
import type { HandlerContext, ServerControl } from './context.js';
import { InputPending, type MrtrRound } from './mrtr.js';
import type { RequestScope } from './scope.js';
import type { InputRequest, InputRequests, InputResponses, JsonValue } from './types.js';

const severity = (level: LogLevel): number => LOG_LEVELS.indexOf(level);

export function createHandlerContext(
  scope: RequestScope,
  round: MrtrRound,
  control: ServerControl,
): HandlerContext {
  const { envelope } = scope;
  const inputs = (requests: InputRequests): InputResponses => {
    const missing: InputRequests = {};
    const found: InputResponses = {};
    for (const [key, request] of Object.entries(requests)) {
      const answer = round.answers[key];
      if (answer === undefined) missing[key] = request;
      else found[key] = answer;
    }
    if (Object.keys(missing).length > 0) throw new InputPending(missing, round.state);
    return found;
  };
  return {
    requestId: scope.id,
    method: scope.method,
    envelope,
    auth: scope.auth,
    get signal() {
      return scope.signal;
    },
    requestState: round.state,
    server: control,
    taskId: undefined,
    async step(_name, fn) {
      return fn();
    },
    async status() {},
    progress(progress, total, message) {
      if (envelope.progressToken === undefined || scope.signal.aborted) return;
      const params: Record<string, unknown> = { progressToken: envelope.progressToken, progress };
      if (total !== undefined) params.total = total;
      if (message !== undefined) params.message = message;
      scope.emit('notifications/progress', params);
    },
    log(level, data, logger) {
      if (envelope.logLevel === undefined || scope.signal.aborted) return;
      if (severity(level) < severity(envelope.logLevel)) return;
      const params: Record<string, unknown> = { level, data };
      if (logger !== undefined) params.logger = logger;
      scope.emit('notifications/message', params);
    },
    input(key: string, request: InputRequest) {
      return inputs({ [key]: request })[key] as InputResponses[string];
    },
    inputs,
    inputRequired(options: { inputRequests?: InputRequests; state?: JsonValue }): never {
      throw new InputPending(options.inputRequests ?? {}, options.state);
    },
  };
}
