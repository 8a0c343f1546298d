// Prints results and follows tasks for the client commands (status line, terminal prompts, exit codes).
import { InputRequiredError } from '../client/errors.js';
import { OAuthFlowError, SignInRequiredError } from '../client/oauth/types.js';
import { failureCode } from '../client/retry.js';
import { ProtocolError } from '../wire/protocol-error.js';
import type { TaskHandle, TaskOutcome } from '../client/task-handle.js';
import type { JsonObject } from '../wire/jsonrpc.js';
import { EXIT, exitCodeOf } from './client-flags.js';
import { terminalInput } from './prompt.js';
import { createStatusLine } from './status-line.js';
import { oneLine, printErr, printJson, printOut, terminalJson } from './terminal-text.js';

export function printResult(result: JsonObject, json: boolean): number {
  if (json) printJson(result);
  else {
    const blocks = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
    const texts = blocks.filter((b) => b.type === 'text').map((b) => String(b.text));
    // A tool's text is shown as it was written, on several lines if it has them.
    if (texts.length > 0) printOut(texts.join('\n'));
    else if (result.structuredContent !== undefined) printOut(terminalJson(result.structuredContent, 2));
    for (const b of blocks.filter((x) => x.type !== 'text')) printOut(oneLine`[${b.type} content]`);
  }
  return result.isError === true ? EXIT.failed : EXIT.ok;
}

export function printOutcome(outcome: TaskOutcome, json: boolean): number {
  if (json) {
    printJson(outcome.task);
    return outcome.status === 'completed' && outcome.result.isError !== true ? EXIT.ok : EXIT.failed;
  }
  if (outcome.status === 'completed') return printResult(outcome.result, false);
  if (outcome.status === 'failed')
    printErr(oneLine`task failed: ${outcome.error.message} (code ${outcome.error.code})`);
  else printErr('task cancelled');
  return EXIT.failed;
}

/** Follows a task to its end with a live status line, asking on the terminal for input. */
export async function followTask(task: TaskHandle, json: boolean, label: string): Promise<number> {
  const line = createStatusLine(label, !json && process.stderr.isTTY === true);
  const input = terminalInput();
  const interactive = process.stdin.isTTY === true;
  try {
    const outcome = await task.result({
      onUpdate: (t) =>
        line.update(String(t.status), typeof t.statusMessage === 'string' ? t.statusMessage : undefined),
      onInput: interactive
        ? async (requests) => {
            line.pause();
            return input.handler(requests);
          }
        : undefined,
    });
    line.stop();
    return printOutcome(outcome, json);
  } catch (err) {
    line.stop();
    if (err instanceof InputRequiredError) {
      const keys = Object.keys(err.inputRequests).join(', ');
      printErr(oneLine`task ${task.taskId} needs input (${keys}) and there is no terminal;`);
      printErr(
        oneLine`answer with: durable-mcp task answer ${task.taskId} --responses '{"<key>":{"action":"accept","content":{…}}}'`,
      );
      return EXIT.inputNeeded;
    }
    throw err;
  } finally {
    input.close();
  }
}

/** What a failed connection's code says, in words. */
const NETWORK_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused (is the server running there?)',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection was closed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: "the server's TLS certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "the server's TLS certificate is self-signed",
};

const NETWORK_CODES: ReadonlySet<string> = new Set(Object.keys(NETWORK_FAILURES));

/** `err`, or the first of its causes, that is an instance of `type` (a transport may wrap what the sign-in threw). */
export function errorOfType<T extends Error>(err: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++)
    if (e instanceof type) return e;
  return undefined;
}

/** Maps errors of client commands to a message and an exit code; `url`: the server the command spoke to. */
export function reportError(err: unknown, url?: string): number {
  if (err instanceof ProtocolError) {
    printErr(oneLine`error ${err.code}: ${err.message}`);
    return exitCodeOf(err);
  }
  if (err instanceof InputRequiredError) {
    printErr(oneLine`${err.message}; run in a terminal to answer`);
    return EXIT.inputNeeded;
  }
  const signIn = errorOfType(err, SignInRequiredError);
  if (signIn !== undefined) {
    // The URL to sign in to is the one the command was given (the resource may be named otherwise).
    const server = url ?? signIn.resource;
    printErr(oneLine`sign-in needed for ${server}: run "durable-mcp login --url ${server}"`);
    return EXIT.inputNeeded;
  }
  const flow = errorOfType(err, OAuthFlowError);
  if (flow !== undefined) {
    printErr(oneLine`sign-in failed: ${flow.message}`);
    // An authorization server that registers no clients: one registered by hand is the way.
    if (/offers no client registration/.test(flow.message))
      printErr(
        oneLine`register a client with it, then run: durable-mcp login --url ${url ?? '<url>'} --client-id ID (a secret in $DURABLE_MCP_CLIENT_SECRET)`,
      );
    return EXIT.serverError;
  }
  const network = failureCode(err, NETWORK_CODES);
  if (network !== undefined) {
    printErr(oneLine`error: cannot reach ${url ?? 'the server'}: ${NETWORK_FAILURES[network]} (${network})`);
    return EXIT.serverError;
  }
  const cause = (err as { cause?: { code?: string } }).cause;
  const why = err instanceof Error ? err.message : String(err);
  printErr(oneLine`error: ${why}${cause?.code ? ` (${cause.code})` : ''}`);
  return EXIT.serverError;
}
