// The HandlerContext a tool handler gets when it runs (or replays) as a durable task.
import type { ExecutionContext } from '../../tasks/execution.js';
import type { ClaimedTask } from '../../tasks/task.js';
import type { ClientCapabilities } from '../../wire/envelope.js';
import { LATEST_PROTOCOL_VERSION } from '../../wire/meta-keys.js';
import type { HandlerContext, ServerControl } from '../context.js';
import { InputPending } from '../mrtr.js';
import type { InputRequests, InputResponses } from '../types.js';

export function createTaskHandlerContext(
  task: ClaimedTask,
  exec: ExecutionContext,
  control: ServerControl,
): HandlerContext {
  const inputs = (requests: InputRequests): InputResponses => {
    const missing: InputRequests = {};
    const found: InputResponses = {};
    for (const [key, request] of Object.entries(requests)) {
      const answer = Object.hasOwn(task.answers, key) ? task.answers[key] : undefined;
      if (answer === undefined) missing[key] = request;
      else found[key] = answer as InputResponses[string];
    }
    if (Object.keys(missing).length > 0) throw new InputPending(missing, undefined);
    return found;
  };
  return {
    requestId: task.id,
    method: 'tools/call',
    envelope: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      clientCapabilities: task.clientCapabilities as ClientCapabilities,
      clientInfo: undefined,
      logLevel: undefined,
      progressToken: undefined,
    },
    auth: task.owner,
    signal: exec.signal,
    taskId: task.id,
    requestState: undefined,
    server: control,
    // Progress and log notifications are not part of tasks in this revision.
    progress() {},
    log() {},
    input: (key, request) => inputs({ [key]: request })[key] as InputResponses[string],
    inputs,
    inputRequired(options): never {
      throw new InputPending(options.inputRequests ?? {}, undefined);
    },
    step: (name, fn) => exec.step(name, fn),
    status: (message) => exec.status(message),
  };
}
