// The servers of the gateway rows: one SDK v1 upstream (stateless Streamable HTTP), the `durable-mcp gateway`
// processes in front of that same upstream process (started after it, with its URL), and the `serve` whose task
// creation the gateway's is compared with. Each server on its own SQLite file.
import { BENCH_TOOLS, CHILD, TSX_FLAGS } from '../config.js';
import { gatewayCommand, serveCommand, type ServerSpec } from './server-spec.js';

/** One anonymous principal creates every task of a creation run: the per-principal caps would answer 429. */
const NO_TASK_CAPS = ['--max-active-tasks', '0', '--max-stored-tasks', '0'];
/** No worker: tasks are created and stay queued, so a run measures the creation path alone. */
const NO_WORKER = ['--concurrency', '0'];
const UPSTREAM = 'upstream-v1';
const GATEWAY = `node bin/durable-mcp.js gateway --upstream <${UPSTREAM}'s URL>`;

export const GATEWAY_SERVERS: Record<string, ServerSpec> = {
  [UPSTREAM]: {
    label:
      'official TypeScript SDK v1 (@modelcontextprotocol/sdk McpServer), stateless Streamable HTTP as its stateless ' +
      'example serves it: a new StreamableHTTPServerTransport (sessionIdGenerator: undefined, enableJsonResponse: ' +
      'true) and McpServer per request on node:http, one tool `echo` (bench/children/upstream-v1.ts)',
    command: () => [...TSX_FLAGS, CHILD.upstreamV1],
  },
  'gateway-sync': {
    label: `${GATEWAY} --sync-tools '*' (every upstream tool answered within the call; own SQLite file)`,
    upstream: UPSTREAM,
    command: (ctx, key) => gatewayCommand(ctx, key, 'bench-gw-sync.db', ['--sync-tools', '*']),
  },
  'ours-noworker': {
    label:
      'node bin/durable-mcp.js serve --tools bench/tools.mjs --concurrency 0 --max-active-tasks 0 ' +
      '--max-stored-tasks 0 (no worker; own SQLite file)',
    command: (ctx, key) =>
      serveCommand(ctx, key, 'bench-noworker.db', ['--tools', BENCH_TOOLS, ...NO_WORKER, ...NO_TASK_CAPS]),
  },
  'gateway-noworker': {
    label: `${GATEWAY} --task-tools '*' --concurrency 0 --max-active-tasks 0 --max-stored-tasks 0 (no worker; own SQLite file)`,
    upstream: UPSTREAM,
    command: (ctx, key) =>
      gatewayCommand(ctx, key, 'bench-gw-noworker.db', ['--task-tools', '*', ...NO_WORKER, ...NO_TASK_CAPS]),
  },
};
