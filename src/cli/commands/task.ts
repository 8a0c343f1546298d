// `durable-mcp task get|watch|cancel|answer <id>`: look at and steer an existing task.
import type { JsonObject } from '../../wire/jsonrpc.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, clientFromFlags, EXIT } from '../client-flags.js';
import { followTask, reportError } from '../follow.js';
import { terminalInput } from '../prompt.js';
import { oneLine, printErr, printJson, printOut, terminalJson } from '../terminal-text.js';
import { META_ERROR_REF } from '../../wire/meta-keys.js';
import { inspectHelp, inspectTask } from './task-inspect.js';

export const taskUsage = `durable-mcp task <get|watch|cancel|answer|inspect> <taskId> [flags]
  get       print the task's status (and result, error or pending input)
  watch     follow the task to its end, answering input in the terminal
  cancel    ask the server to cancel the task
  answer    answer pending input: --responses '{"key":{"action":"accept","content":{…}}}', or interactively
${inspectHelp}
${clientFlagsHelp}`;

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
        return EXIT.ok;
      }
      case 'watch':
        return await followTask(handle, json, taskId);
      case 'cancel':
        await handle.cancel();
        if (!json) printOut(oneLine`cancel requested for ${taskId}`);
        return EXIT.ok;
      case 'answer': {
        let responses: Record<string, JsonObject>;
        if (typeof values.responses === 'string') {
          try {
            responses = JSON.parse(values.responses) as Record<string, JsonObject>;
          } catch {
            throw new UsageError('--responses must be a JSON object');
          }
        } else {
          const t = await handle.get();
          if (t.status !== 'input_required') {
            printErr(oneLine`${taskId} is ${t.status}: nothing to answer`);
            return EXIT.ok;
          }
          const input = terminalInput();
          try {
            responses = await input.handler(t.inputRequests as Record<string, JsonObject>);
          } finally {
            input.close();
          }
        }
        await handle.answer(responses);
        if (!json) printOut(oneLine`answered ${Object.keys(responses).join(', ')}`);
        return EXIT.ok;
      }
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
