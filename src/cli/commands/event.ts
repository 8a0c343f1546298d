// `durable-mcp event send <taskId> <name>`: delivers an event to a task waiting in ctx.waitForEvent, as its owner
// (the client's credentials, `POST /tasks/{id}/events/{name}`), or with --admin as an operator (the operator API,
// `POST /admin/api/v1/tasks/{id}/events/{name}`; also `durable-mcp admin event send`).
import { EventRefusedError, type EventOutcome } from '../../client/events.js';
import type { JsonValue } from '../../json.js';
import { eventNameProblem } from '../../tasks/events.js';
import { adminApiFromFlags, type Answer } from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, clientFromFlags, EXIT, jsonOutput } from '../client-flags.js';
import { reportError } from '../follow.js';
import { readJsonValue } from '../json-input.js';
import { oneLine, printErr, printJson, printOut } from '../terminal-text.js';

export const eventUsage = `durable-mcp event send <taskId> <name> [--data JSON | --file PATH] [--admin] [flags]
  deliver event <name> to a task waiting for it (ctx.waitForEvent); one the task does not wait for yet is kept
  for it. The same payload sent again changes nothing; another payload after the first is refused.
  --data JSON   the payload: JSON, @path for a file's, - for stdin's (default null)
  --file PATH   the payload is the JSON in this file (as --data @PATH)
  --admin       as an operator (the operator API: any task within your tenants), not as the task's owner
${clientFlagsHelp}
Exit codes: 0 delivered or kept, 1 refused (no such task of yours 404, another payload came first 409, the task
ended or stopped waiting 410, the payload fails the wait's schema 422, too many kept events 429), 2 usage errors,
3 not authenticated or server errors.`;

const FLAGS = {
  ...CLIENT_FLAGS,
  data: { type: 'string' },
  file: { type: 'string' },
  admin: { type: 'boolean' },
} as const;

const said: Record<EventOutcome, string> = {
  delivered: 'delivered: the task runs again',
  kept: 'kept: the task does not wait for it yet',
  repeat: 'already delivered with this payload: nothing changed',
};

async function payloadOf(values: Record<string, unknown>): Promise<JsonValue> {
  if (values.data !== undefined && values.file !== undefined)
    throw new UsageError('give the payload with --data or --file, not both');
  if (typeof values.file === 'string') return (await readJsonValue(`@${values.file}`, '--file')) as JsonValue;
  if (typeof values.data === 'string') return (await readJsonValue(values.data, '--data')) as JsonValue;
  return null;
}

/** `event send …` (with `admin`: `admin event send …`, --admin implied). */
export async function event(argv: string[], asOperator = false): Promise<number> {
  const { values, positionals } = parseFlags(argv, FLAGS, true);
  const [verb, taskId, name, extra] = positionals;
  if (verb !== 'send' || taskId === undefined || name === undefined || extra !== undefined)
    throw new UsageError(eventUsage);
  const problem = eventNameProblem(name);
  if (problem !== undefined) throw new UsageError(oneLine`event send: ${problem}`);
  const payload = await payloadOf(values);
  const json = jsonOutput(values);
  const report = (outcome: unknown): number => {
    if (json) printJson({ taskId, name, outcome });
    else
      printOut(oneLine`event "${name}" for ${taskId}: ${said[outcome as EventOutcome] ?? String(outcome)}`);
    return EXIT.ok;
  };
  if (asOperator || values.admin === true) {
    const api = adminApiFromFlags(values);
    const path = `/tasks/${encodeURIComponent(taskId)}/events/${encodeURIComponent(name)}`;
    try {
      const answer = (await api.act(await api.session(), 'POST', path, payload)) as Answer<{
        outcome: string;
      }>;
      return report(answer.outcome);
    } catch (err) {
      return reportAdminError(err, api.base, taskId);
    }
  }
  const { client, url } = clientFromFlags(values);
  try {
    return report(await client.sendEvent(taskId, name, payload));
  } catch (err) {
    if (!(err instanceof EventRefusedError)) return reportError(err, url);
    printErr(oneLine`event "${name}" for ${taskId} refused (${err.status}): ${err.message}`);
    return err.status === 401 || err.status === 403 || err.status >= 500 ? EXIT.serverError : EXIT.failed;
  } finally {
    await client.close();
  }
}
