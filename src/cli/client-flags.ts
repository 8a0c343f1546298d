// Flags shared by the client-side commands: where the server is, how to authenticate, how to print.
import { createClient, type McpClient } from '../client/client.js';
import type { InputHandler } from '../client/task-handle.js';
import { VERSION } from '../version.js';
import { ErrorCode } from '../wire/codes.js';
import type { ProtocolError } from '../wire/protocol-error.js';
import { UsageError } from './args.js';
import { signInAuth, signInSession } from './sign-in-session.js';

export const CLIENT_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  output: { type: 'string' },
} as const;

export const clientFlagsHelp = `  --url URL        server endpoint (default $DURABLE_MCP_URL or http://127.0.0.1:3000/mcp)
  --token TOKEN    bearer token (default $DURABLE_MCP_TOKEN; else the sign-in of durable-mcp login, if any)
  --output json    machine-readable output on stdout (default: human)`;

/**
 * Exit codes of the client commands (README, CLI). A command exits 0 only when it did what it was asked; a request the
 * server refused is the caller's to change (1), a server that cannot answer it is not (3).
 */
export const EXIT = {
  ok: 0,
  /**
   * The tool reported an error (isError), the task failed or was cancelled, or the server refused the request: an
   * unknown task, an idempotency key used with other arguments, arguments or an answer it does not accept (-32602), a
   * client capability it requires (-32021), a rate limit or quota (429), an answer the task does not wait for.
   */
  failed: 1,
  usage: 2,
  /**
   * The server could not be reached, failed (-32603, HTTP 5xx), did not accept the credentials (401/403), or answered
   * something that is not the protocol; or a sign-in failed (the authorization server refused or answered amiss).
   */
  serverError: 3,
  /** Input was requested, or a sign-in is needed, and there is no terminal to ask on. */
  inputNeeded: 4,
} as const;

/** The exit codes, as every client command's --help lists them. */
export const exitCodesHelp = `Exit codes: 0 done; 1 tool error, task failed or cancelled, or request refused (unknown task, idempotency
key reused with other arguments, invalid arguments or answer, missing capability, rate limit or quota, an answer
the task does not wait for); 2 usage; 3 server or connection error (unreachable, internal error, credentials not
accepted, malformed answer), or a sign-in that failed; 4 input or sign-in needed without a terminal.`;

/** The JSON-RPC errors that refuse a request (exit 1) rather than report a server that cannot serve it (exit 3). */
const REFUSALS: ReadonlySet<number> = new Set([
  ErrorCode.InvalidParams,
  ErrorCode.MissingRequiredClientCapability,
  ErrorCode.TooManyRequests,
]);

/** The exit code of a JSON-RPC error the server answered with. */
export const exitCodeOf = (error: ProtocolError): number =>
  REFUSALS.has(error.code) ? EXIT.failed : EXIT.serverError;

export interface ClientContext {
  client: McpClient;
  json: boolean;
  url: string;
}

/** The server endpoint and bearer token of --url/--token, or of their environment variables. */
export function serverFromFlags(values: Record<string, unknown>): { url: string; token: string | undefined } {
  const url =
    (values.url as string | undefined) ?? process.env.DURABLE_MCP_URL ?? 'http://127.0.0.1:3000/mcp';
  // An empty $DURABLE_MCP_TOKEN is unset (so `DURABLE_MCP_TOKEN= durable-mcp call …` uses the stored sign-in).
  const token = (values.token as string | undefined) ?? (process.env.DURABLE_MCP_TOKEN || undefined);
  return { url, token };
}

/**
 * The client of --url. Without a bearer token it uses the sign-in kept by `durable-mcp login` (refreshing its tokens
 * as it goes); a sign-in that is needed is asked for on the terminal, and without one (stdin or stderr not a terminal)
 * fails with SignInRequiredError, which `reportError` turns into exit 4.
 */
export function clientFromFlags(values: Record<string, unknown>, onInput?: InputHandler): ClientContext {
  const { url, token } = serverFromFlags(values);
  const terminal = process.stdin.isTTY === true && process.stderr.isTTY === true;
  const client = createClient({
    url,
    ...(token === undefined ? { auth: signInAuth(signInSession(url, {}, terminal)) } : { token }),
    clientInfo: { name: 'durable-mcp-cli', version: VERSION },
    onInput,
    capabilities: { elicitation: {}, roots: {} },
  });
  return { client, json: values.output === 'json', url };
}

/** Whether --output asks for JSON; any other value than `json` is a usage error. */
export function jsonOutput(values: Record<string, unknown>): boolean {
  if (values.output !== undefined && values.output !== 'json')
    throw new UsageError(`--output must be json (got "${String(values.output)}")`);
  return values.output === 'json';
}
