// `durable-mcp serve`: the HTTP (or stdio) server on the configured store and tool sets.
import { randomBytes } from 'node:crypto';
import { createAnonymousAuthenticator } from '../../auth/authenticator.js';
import { getOrCreateMeta } from '../../stores/sqlite/database.js';
import { createSqliteTaskStore } from '../../stores/sqlite/task-store.js';
import { createHttpHandler } from '../../transport/http/handler.js';
import { listenHttp } from '../../transport/http/node-server.js';
import { LOOPBACK_HOSTS } from '../../transport/http/origin-check.js';
import { serveStdio } from '../../transport/stdio/stdio.js';
import { createDurableMcp } from '../../runtime.js';
import { intFlag, parseFlags, UsageError } from '../args.js';
import { loadToolSets } from '../tool-sets.js';

export const serveUsage = `durable-mcp serve [flags]
  --host HOST            bind address (default 127.0.0.1)
  --port PORT            port (default 3000; 0 picks a free one)
  --store PATH           SQLite file (default ./data/tasks.db)
  --tools LIST           comma list of built-in sets (demo, conformance) or module paths (default demo)
  --allowed-hosts LIST   extra Host/Origin names accepted (DNS-rebinding protection); '*' disables the check
  --keep-alive-ms N      SSE keep-alive comment interval (default 15000; 0 disables)
  --concurrency N        task runs at once in this process (default 8)
  --lease-ms N           task lease length; heartbeats renew it every third (default 30000)
  --stdio                serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP
Environment: DURABLE_MCP_STATE_SECRET seals MRTR requestState (default: a secret kept in the store).`;

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseFlags(argv, {
    host: { type: 'string' },
    port: { type: 'string' },
    store: { type: 'string' },
    tools: { type: 'string' },
    'allowed-hosts': { type: 'string' },
    'keep-alive-ms': { type: 'string' },
    stdio: { type: 'boolean' },
    concurrency: { type: 'string' },
    'lease-ms': { type: 'string' },
  });
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const port = intFlag(values.port, 'port', 3000);
  if (port > 65535) throw new UsageError('--port must be at most 65535');
  const storePath = (values.store as string | undefined) ?? './data/tasks.db';
  if (storePath.startsWith('postgres://') || storePath.startsWith('postgresql://')) {
    throw new UsageError('--store postgres://… is not available in this build; use a SQLite file path');
  }
  const toolSets = await loadToolSets((values.tools as string | undefined) ?? 'demo');
  const concurrency = intFlag(values.concurrency, 'concurrency', 8);
  const leaseMs = intFlag(values['lease-ms'], 'lease-ms', 30_000);
  const store = createSqliteTaskStore({ path: storePath });
  const stateSecret =
    process.env.DURABLE_MCP_STATE_SECRET ??
    getOrCreateMeta(store.db, 'request_state_secret', () => randomBytes(32).toString('base64'));
  const runtime = createDurableMcp({
    toolSets,
    store,
    stateSecret,
    worker: {
      concurrency: Math.max(1, concurrency),
      leaseMs: Math.max(300, leaseMs),
      onError: (err, taskId) => console.error(`worker error${taskId ? ` on ${taskId}` : ''}:`, err),
    },
  });
  const { server } = runtime;
  const shutdown = (): Promise<void> => runtime.close(5_000);

  if (values.stdio === true) {
    await serveStdio({ server, input: process.stdin, output: process.stdout });
    await shutdown();
    return;
  }

  const extraHosts = ((values['allowed-hosts'] as string | undefined) ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase());
  const boundHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  const allowedHosts = [...LOOPBACK_HOSTS, ...extraHosts.filter(Boolean)];
  if (!['0.0.0.0', '[::]'].includes(boundHost)) allowedHosts.push(boundHost.toLowerCase());
  const handler = createHttpHandler({
    server,
    authenticator: createAnonymousAuthenticator(),
    origin: { allowedHosts },
    keepAliveMs: intFlag(values['keep-alive-ms'], 'keep-alive-ms', 15_000),
  });
  const running = await listenHttp(handler, host, port);
  console.error(
    'auth: anonymous development mode — every caller is the same principal; do not expose this server',
  );
  console.log(`listening on http://${boundHost}:${running.port}/mcp`);

  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    console.error(`${signal}: shutting down`);
    const closing = running.close();
    await server.close();
    await closing;
    await shutdown();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
