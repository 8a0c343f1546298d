// Flags shared by the client-side commands: where the server is, how to authenticate, how to print.
import { createClient, type McpClient } from '../client/client.js';
import type { InputHandler } from '../client/task-handle.js';
import { VERSION } from '../version.js';
import { UsageError } from './args.js';

export const CLIENT_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  output: { type: 'string' },
} as const;

export const clientFlagsHelp = `  --url URL        server endpoint (default $DURABLE_MCP_URL or http://127.0.0.1:3000/mcp)
  --token TOKEN    bearer token (default $DURABLE_MCP_TOKEN)
  --output json    machine-readable output on stdout (default: human)`;

/** Exit codes of the client commands. */
export const EXIT = {
  ok: 0,
  /** The tool reported an error (isError), or the task failed or was cancelled. */
  toolFailed: 1,
  usage: 2,
  /** The server answered with a JSON-RPC error, or could not be reached. */
  protocol: 3,
  /** Input was requested but there is no terminal to ask on. */
  inputNeeded: 4,
} as const;

export interface ClientContext {
  client: McpClient;
  json: boolean;
  url: string;
}

/** The server endpoint and bearer token of --url/--token, or of their environment variables. */
export function serverFromFlags(values: Record<string, unknown>): { url: string; token: string | undefined } {
  const url =
    (values.url as string | undefined) ?? process.env.DURABLE_MCP_URL ?? 'http://127.0.0.1:3000/mcp';
  const token = (values.token as string | undefined) ?? process.env.DURABLE_MCP_TOKEN;
  return { url, token };
}

export function clientFromFlags(values: Record<string, unknown>, onInput?: InputHandler): ClientContext {
  const { url, token } = serverFromFlags(values);
  const client = createClient({
    url,
    token,
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
