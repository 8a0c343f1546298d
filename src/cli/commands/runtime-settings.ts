// What `serve` builds its runtime (server, tasks extension, worker) with once the store opens, from its flags
// (serve-flags.ts) and, for the gateway, the hooks it sets before serving.
import type { StepDefaults } from '../../protocol/define.js';
import type { FallbackOptions } from '../../protocol/tasks/fallback.js';
import type { TaskLimits } from '../../tasks/limits.js';

/** What the runtime (server, tasks extension, worker) is built with once the store opens. */
export interface RuntimeSettings {
  steps: StepDefaults | undefined;
  maxListensPerPrincipal: number;
  tasksGetRate: number;
  maxActiveTasksPerPrincipal: number;
  maxStoredTasksPerPrincipal: number;
  maxActiveTasksPerTenant: number;
  maxStoredTasksPerTenant: number;
  /** Bytes the kept tasks of a principal may store (0: no limit). */
  maxStoredBytesPerPrincipal: number;
  /** What one task may store: records, bytes of a step's value, bytes of a result. */
  limits: TaskLimits;
  fallback: FallbackOptions | false;
  /** Callers' `_meta["dev.durable-mcp/priority"]` is honoured (--allow-caller-priority). */
  allowCallerPriority: boolean;
  /** How long a call within its request waits for a slot of its tool's concurrency key (--slot-wait-ms). */
  slotWaitMs: number;
  /** Set by the gateway: the error for a call of a tool it does not serve yet (ServerOptions.unknownTool). */
  unknownTool?: (name: string) => Error | undefined;
  worker:
    | false
    | {
        concurrency: number;
        leaseMs: number;
        removedToolDrainMs: number;
        /** Set by the gateway until it has read its upstream's tools (the runtime's worker option). */
        holdUnservedTasks?: () => boolean;
      };
}
