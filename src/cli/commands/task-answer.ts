// `durable-mcp task answer <id>`: answers what the task waits for, and says what it did not wait for. The server
// ignores answers to keys that are not outstanding without a word (tasks/update), so the command reads the task first.
import type { TaskHandle } from '../../client/task-handle.js';
import type { JsonObject } from '../../wire/jsonrpc.js';
import { EXIT } from '../client-flags.js';
import { readJsonObject } from '../json-input.js';
import { terminalInput } from '../prompt.js';
import { oneLine, printErr, printJson, printOut } from '../terminal-text.js';

export const answerHelp = `  answer    answer pending input: --responses '{"key":{"action":"accept","content":{…}}}' (or @FILE, or -
            for stdin), or interactively; answers to questions the task is not waiting for are named on
            stderr and not sent (exit 1)`;

async function askOnTerminal(requests: Record<string, JsonObject>): Promise<Record<string, JsonObject>> {
  const input = terminalInput();
  try {
    return await input.handler(requests);
  } finally {
    input.close();
  }
}

/** The answers the task waits for, and the keys of the others. */
function sortAnswers(
  responses: Record<string, JsonObject>,
  waiting: Record<string, JsonObject>,
): { awaited: Record<string, JsonObject>; ignored: string[] } {
  const awaited: Record<string, JsonObject> = {};
  const ignored: string[] = [];
  for (const [key, answer] of Object.entries(responses)) {
    if (Object.hasOwn(waiting, key)) awaited[key] = answer;
    else ignored.push(key);
  }
  return { awaited, ignored };
}

/**
 * Exit 0 when every answer went to a question the task waits for; 1 when the task waits for none (nothing is sent) or
 * some answers were not for it (those are not sent, the others are).
 */
export async function answerTask(
  handle: TaskHandle,
  responsesFlag: string | undefined,
  json: boolean,
): Promise<number> {
  const id = handle.taskId;
  // The flag is read first: a file that cannot be read is a usage error before any request.
  const given =
    responsesFlag === undefined
      ? undefined
      : ((await readJsonObject(responsesFlag, '--responses')) as Record<string, JsonObject>);
  const task = await handle.get();
  if (task.status !== 'input_required') {
    printErr(oneLine`task ${id} is ${task.status}: it waits for no answer; nothing was sent`);
    return EXIT.failed;
  }
  const waiting = (task.inputRequests ?? {}) as Record<string, JsonObject>;
  const waitingFor = Object.keys(waiting).join(', ');
  const { awaited, ignored } = sortAnswers(given ?? (await askOnTerminal(waiting)), waiting);
  for (const key of ignored)
    printErr(oneLine`not sent: "${key}": task ${id} does not wait for it (it waits for: ${waitingFor})`);
  const answered = Object.keys(awaited);
  if (answered.length > 0) await handle.answer(awaited);
  if (json) printJson({ taskId: id, answered, ignored });
  else if (answered.length > 0) printOut(oneLine`answered ${answered.join(', ')}`);
  else printErr(oneLine`nothing was sent to task ${id}`);
  return ignored.length === 0 && answered.length > 0 ? EXIT.ok : EXIT.failed;
}
