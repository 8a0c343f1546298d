// Where the suite finds the repository, the CLI, the fixture tools and the gateway's test upstream, and the flags
// and capabilities every chaos server and client shares.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TASKS_EXTENSION } from '../../../test/support/protocol.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const BIN = join(ROOT, 'bin', 'durable-mcp.js');
export const CHAOS_TOOLS = join(ROOT, 'test', 'fixtures', 'tools', 'chaos-tools.mjs');
/** The MCP server written with the official SDK v1 that the gateway sections put behind `durable-mcp gateway`. */
export const UPSTREAM_V1 = join(ROOT, 'test', 'fixtures', 'gateway', 'upstream-v1.mjs');
export const UNSERIALIZABLE_TOOLS = join(ROOT, 'test', 'fixtures', 'tools', 'unserializable-tools.mjs');
export const TASK_CAPS = { extensions: { [TASKS_EXTENSION]: {} }, elicitation: {} };

/** Flags every chaos server gets: no rate limit, cap or quota in the way of the load, no audit lines, quiet logs. */
export const COMMON_SERVE_FLAGS: readonly string[] = [
  '--host',
  '127.0.0.1',
  '--port',
  '0',
  '--no-audit',
  '--tasks-get-rate',
  '0',
  '--max-active-tasks',
  '0',
  '--max-stored-tasks',
  '0',
  '--log-level',
  'warn',
];
