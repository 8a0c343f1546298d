// `durable-mcp task get|watch|cancel|answer <id>`: look at and steer an existing task.
import type { JsonObject } from '../../wire/jsonrpc.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, clientFromFlags, EXIT, exitCodesHelp } from '../client-flags.js';
import { followTask, reportError } from '../follow.js';
import { oneLine, printJson, printOut, terminalJson } from '../terminal-text.js';
import { META_ERROR_REF } from '../../wire/meta-keys.js';
import { inspectHelp, inspectTask } from './task-inspect.js';
import { answerHelp, answerTask } from './task-answer.js';

export const taskUsage = `durable-mcp task <get|watch|cancel|answer|inspect> <taskId> [flags]
  get       print the task's status (and result, error or pending input)
  watch     follow the task to its end, answering input in the terminal
  cancel    ask the server to cancel the task
${answerHelp}
${inspectHelp}
${clientFlagsHelp}
${exitCodesHelp}
task get exits 1 for a task that failed, was cancelled or completed with a tool error; 0 for any other.`;

/** The text of a tool error result, and the reference under which the server keeps the error. */
function toolError(result: JsonObject): string {
  const blocks = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => String(b.text))
    .join(' ');
  const ref = (result._meta as JsonObject | undefined)?.[META_ERROR_REF];
  return oneLine`  tool error: ${text}${typeof ref === 'string' ? ` (error reference ${ref})` : ''}`;
}

/** A task that failed, was cancelled or completed with a tool error (task get exits 1 for it). */
const endedBadly = (task: JsonObject): boolean =>
  task.status === 'failed' ||
  task.status === 'cancelled' ||
  (task.status === 'completed' && (task.result as JsonObject | undefined)?.isError === true);

function describe(task: JsonObject): string {
  const message = task.statusMessage ? ` — ${String(task.statusMessage)}` : '';
  const lines = [oneLine`${task.taskId}: ${task.status}${message}`];
  if (task.status === 'input_required')
    lines.push(oneLine`  waiting for: ${Object.keys(task.inputRequests as object).join(', ')}`);
  if (task.status === 'failed') lines.push(`  error ${terminalJson(task.error)}`);
  if (task.status === 'completed') {
    const result = task.result as JsonObject;
    if (result.isError === true) lines.push(toolError(result));
    lines.push(`  result ${terminalJson(result)}`);
  }
  return lines.join('\n');
}

export async function task(argv: string[]): Promise<number> {
  if (argv[0] === 'inspect') return inspectTask(argv);
  const { values, positionals } = parseFlags(argv, { ...CLIENT_FLAGS, responses: { type: 'string' } }, true);
  const [verb, taskId] = positionals;
  if (verb === undefined || taskId === undefined || positionals.length > 2) throw new UsageError(taskUsage);
  const { client, json, url } = clientFromFlags(values);
  const handle = client.task(taskId);
  try {
    switch (verb) {
      case 'get': {
        const t = await handle.get();
        const { _meta: _m, resultType: _r, ...detailed } = t;
        if (json) printJson(detailed);
        else printOut(describe(detailed));
        return endedBadly(detailed) ? EXIT.failed : EXIT.ok;
      }
      case 'watch':
        return await followTask(handle, json, taskId);
      case 'cancel':
        await handle.cancel();
        if (!json) printOut(oneLine`cancel requested for ${taskId}`);
        return EXIT.ok;
      case 'answer':
        return await answerTask(handle, values.responses as string | undefined, json);
      default:
        throw new UsageError(`unknown task command "${verb}"\n\n${taskUsage}`);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    return reportError(err, url);
  } finally {
    await client.close();
  }
}
