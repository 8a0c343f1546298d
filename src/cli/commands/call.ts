// `durable-mcp call <tool>`: calls a tool, answering input in the terminal and following a task to its end.
import type { JsonObject } from '../../wire/jsonrpc.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, clientFromFlags, EXIT, exitCodesHelp } from '../client-flags.js';
import { readJsonObject, readsStdin } from '../json-input.js';
import { errorOfType, followTask, printResult, reportError } from '../follow.js';
import { terminalInput } from '../prompt.js';
import { oneLine, printErr, printJson, printOut, terminalLine } from '../terminal-text.js';
import { InputRequiredError } from '../../client/errors.js';
import { OAuthFlowError, SignInRequiredError } from '../../client/oauth/types.js';
import { ProtocolError } from '../../wire/protocol-error.js';
import { newIdempotencyKey } from '../../client/idempotency-key.js';
import { checkIdempotencyKey } from '../../wire/idempotency-key.js';
import { neverSent } from '../../client/retry.js';

export const callUsage = `durable-mcp call <tool> [--arg key=value …] [--json '{…}'] [--detach] [flags]
  --arg key=value  an argument (value parsed as JSON when it is valid JSON, else a string); repeatable
  --json '{…}'     all arguments as one JSON object; --json @FILE reads it from a file, --json - from stdin
                   (up to 64 MiB; the command line itself takes at most 128 KiB per argument)
  --detach         print the task id and return at once instead of following the task
  --idempotency-key K  the call's key (default: a new one): a call repeated with the same key, tool and
                   arguments gets the task the first one created, never a second one (a lost answer is
                   retried with it automatically; if every retry fails, the key is printed); 1 to 255
                   characters, no control character
${clientFlagsHelp}
${exitCodesHelp}`;

async function parseArgsFlags(values: Record<string, unknown>): Promise<JsonObject> {
  const args: JsonObject =
    typeof values.json === 'string' ? { ...(await readJsonObject(values.json, '--json')) } : {};
  for (const pair of (values.arg as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg ${pair}: expected key=value`);
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // not JSON: keep the string
    }
    args[pair.slice(0, eq)] = value;
  }
  return args;
}

/** A sign-in that was needed or failed: the server took nothing, so there is no task to reach again. */
const signInError = (err: unknown): boolean =>
  errorOfType(err, SignInRequiredError) !== undefined || errorOfType(err, OAuthFlowError) !== undefined;

export async function call(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    argv,
    {
      ...CLIENT_FLAGS,
      arg: { type: 'string', multiple: true },
      json: { type: 'string' },
      detach: { type: 'boolean' },
      'idempotency-key': { type: 'string' },
    },
    true,
  );
  const [tool, ...extra] = positionals;
  if (tool === undefined || extra.length > 0) throw new UsageError('call needs exactly one tool name');
  const args = await parseArgsFlags(values);
  const key = (values['idempotency-key'] as string | undefined) ?? newIdempotencyKey();
  const checked = checkIdempotencyKey(key);
  if (!checked.ok) throw new UsageError(`--idempotency-key ${checked.reason}`);
  const input = terminalInput();
  // Arguments read from stdin leave no terminal to answer questions on.
  const interactive = process.stdin.isTTY === true && !readsStdin(values.json);
  const { client, json, url } = clientFromFlags(values, interactive ? (r) => input.handler(r) : undefined);
  try {
    const outcome = await client.callTool(tool, args, { idempotencyKey: key }).catch((err: unknown) => {
      // The answer may be lost while the task exists: say how to reach it again instead of calling anew (unless
      // the call never left: then there is no task to reach).
      if (
        !(err instanceof ProtocolError) &&
        !(err instanceof InputRequiredError) &&
        !neverSent(err) &&
        !signInError(err)
      )
        printErr(
          oneLine`the answer did not arrive; run the same call with --idempotency-key ${key} to reach its task`,
        );
      throw err;
    });
    if (outcome.kind === 'result') return printResult(outcome.result, json);
    if (values.detach === true) {
      if (json) printJson({ taskId: outcome.task.taskId });
      else printOut(terminalLine(outcome.task.taskId));
      return EXIT.ok;
    }
    if (!json) printErr(oneLine`task ${outcome.task.taskId} created`);
    return await followTask(outcome.task, json, tool);
  } catch (err) {
    return reportError(err, url);
  } finally {
    input.close();
    await client.close();
  }
}
