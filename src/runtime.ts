// Wires a server, the tasks extension and a worker around one TaskStore: the usual way to embed durable-mcp.
import { createMcpServer, type McpServer, type ServerInfo, type ServerOptions } from './protocol/server.js';
import type { StepDefaults, ToolSet } from './protocol/define.js';
import type { Clock } from './tasks/clock.js';
import type { ToolErrorReport } from './tasks/observer.js';
import { createTasksExtension, type TasksExtensionOptions } from './protocol/tasks/extension.js';
import { createTaskRunner } from './protocol/tasks/runner.js';
import type { TaskStore } from './tasks/store.js';
import { VERSION } from './version.js';
import { createWorker, type Worker, type WorkerOptions } from './worker/worker.js';
import { combineObservers } from './tasks/observer.js';

export interface DurableMcpOptions {
  toolSets: ToolSet[];
  store: TaskStore;
  info?: ServerInfo;
  instructions?: string;
  /** Seals MRTR requestState; give every replica the same secret. */
  stateSecret?: string | Buffer;
  tasks?: Omit<TasksExtensionOptions, 'store' | 'now'>;
  /** Worker settings, or false for a process that serves requests but runs no tasks. */
  worker?: Omit<WorkerOptions, 'store' | 'runner' | 'now' | 'clock'> | false;
  now?: () => number;
  /** Time and timers of the runtime (replaces `now`): step timeouts, waits and the tasks' timestamps. */
  clock?: Clock;
  /** Defaults of every tool's `ctx.step` (retry policy, timeout of each attempt), under the tool's own. */
  steps?: StepDefaults;
  /** Told once of every error a tool threw: kept with its task, or answered as an isError result. */
  onToolError?: (report: ToolErrorReport) => void;
  /** Extra server settings (dispatch wrapper for tracing, subscription counting, paging, cache hints). */
  server?: Pick<
    ServerOptions,
    'wrapDispatch' | 'onSubscription' | 'pageSize' | 'listTtlMs' | 'discoverTtlMs'
  >;
}

export interface DurableMcp {
  readonly server: McpServer;
  readonly worker: Worker | undefined;
  readonly store: TaskStore;
  /** Ends subscriptions, stops the worker (waiting up to graceMs for runs), closes the store. */
  close(graceMs?: number): Promise<void>;
}

export function createDurableMcp(options: DurableMcpOptions): DurableMcp {
  const { store } = options;
  const now = options.clock === undefined ? options.now : () => (options.clock as Clock).now();
  const server = createMcpServer({
    info: options.info ?? { name: 'durable-mcp', version: VERSION },
    toolSets: options.toolSets,
    instructions: options.instructions,
    stateSecret: options.stateSecret,
    now,
    steps: options.steps,
    onToolError: options.onToolError,
    ...options.server,
    extensions: [createTasksExtension({ store, now, ...options.tasks })],
  });
  const onToolError = options.onToolError;
  const worker =
    options.worker === false
      ? undefined
      : createWorker({
          ...options.worker,
          store,
          now,
          clock: options.clock,
          runner: createTaskRunner(server.registry, server.info, { steps: options.steps }),
          observer:
            onToolError === undefined
              ? options.worker?.observer
              : combineObservers(options.worker?.observer, { toolError: onToolError }),
        });
  worker?.start();
  let closed = false;
  return {
    server,
    worker,
    store,
    async close(graceMs = 5_000) {
      if (closed) return;
      closed = true;
      await server.close();
      await worker?.stop(graceMs);
      await store.close();
    },
  };
}
