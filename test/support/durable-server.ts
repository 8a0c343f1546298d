// An in-process durable server (tasks extension + worker on a SQLite file in a temp dir) on a loopback port.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createAnonymousAuthenticator,
  createDurableMcp,
  createHttpHandler,
  listenHttp,
  LOOPBACK_HOSTS,
  type Authenticator,
  type DurableMcp,
  type DurableMcpOptions,
  type LegacyOptions,
} from '../../src/index.js';
import { createSqliteTaskStore } from '../../src/advanced.js';
import type { BuiltInTaskStore } from '../../src/stores/built-in.js';

export interface DurableTestServer {
  url: string;
  dir: string;
  runtime: DurableMcp;
  close(): Promise<void>;
}

export interface DurableTestServerOptions extends Partial<Omit<DurableMcpOptions, 'store'>> {
  toolSets: DurableMcpOptions['toolSets'];
  /** Builds the store from the temp dir (default: a SQLite file there). */
  store?: (dir: string) => BuiltInTaskStore;
  authenticator?: Authenticator;
  keepAliveMs?: number;
  /** Settings of the 2025-11-25 wire (the runtime's store is always given to it). */
  legacy?: Omit<LegacyOptions, 'store' | 'sessions'>;
}

export async function startDurableServer(options: DurableTestServerOptions): Promise<DurableTestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-test-'));
  const { store, authenticator, keepAliveMs, legacy, ...rest } = options;
  const tasks = store?.(dir) ?? createSqliteTaskStore({ path: join(dir, 'tasks.db') });
  const runtime = createDurableMcp({
    tasks: { tasksGetRate: false, defaultPollIntervalMs: 100 },
    worker: { pollMs: 50 },
    ...rest,
    store: tasks,
  });
  const handler = createHttpHandler({
    server: runtime.server,
    authenticator: authenticator ?? createAnonymousAuthenticator(),
    origin: { allowedHosts: LOOPBACK_HOSTS },
    ...(keepAliveMs === undefined ? {} : { keepAliveMs }),
    legacy: { ...legacy, store: tasks, sessions: tasks.sessions },
  });
  const running = await listenHttp(handler, '127.0.0.1', 0);
  return {
    url: running.url,
    dir,
    runtime,
    async close() {
      await running.close(300);
      await runtime.close(500);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
