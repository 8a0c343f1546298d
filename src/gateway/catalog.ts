// The gateway's tools: one per upstream tool, with the upstream's name (or a configured prefix before it), schemas
// and annotations, a task policy from the gateway's settings, and a handler that makes the upstream call the task's
// one durable step (delivery.ts).
import { createHash } from 'node:crypto';
import type { TaskPolicy, ToolDefinition } from '../protocol/define.js';
import type { TaskConcurrency } from '../protocol/tool-types.js';
import { MAX_CONCURRENCY_KEY_LENGTH } from '../tasks/concurrency.js';
import type { JsonObject } from '../protocol/types.js';
import { callUpstream, deliveryOf, type Delivery, type DeliverySettings } from './delivery.js';
import { backoffCeilingMs } from '../pacing/backoff.js';
import { globMatcher } from './globs.js';
import type { Upstream, UpstreamTool } from './upstream.js';

export interface CatalogSettings extends DeliverySettings {
  /** Put before every upstream tool's name (default none). */
  prefix?: string;
  /** Tools (by upstream name, `*` any run of characters) that are only ever tasks. */
  taskTools?: string[];
  /** Tools that are never tasks (answered within the call, as the upstream answers). */
  syncTools?: string[];
  /** Names the gateway itself serves (the facade tools): an upstream tool under one of them is refused. */
  reserved?: string[];
  /**
   * Every tool's tasks under this one concurrency limit (TaskPolicy.concurrency), across replicas: the cap on the
   * upstream's calls at once (upstreamConcurrency). Synchronous calls (syncTools) are not counted.
   */
  concurrency?: TaskConcurrency;
}

function taskPolicyOf(name: string, settings: CatalogSettings): TaskPolicy {
  if (globMatcher(settings.syncTools)(name)) return { support: 'never' };
  const capped = settings.concurrency === undefined ? {} : { concurrency: settings.concurrency };
  if (globMatcher(settings.taskTools)(name)) return { support: 'required', fallback: true, ...capped };
  return { support: 'optional', ...capped };
}

/**
 * The concurrency key of an upstream's cap, the same on every replica given the same upstream: its label (host, or
 * command name) for people, and a digest of where it is (`identity`: URL or command line) so that two upstreams with
 * one label (two stdio servers run by `node`) are kept apart without showing callers more of either.
 */
export function upstreamConcurrencyKey(label: string, identity = label): string {
  const digest = createHash('sha256').update(identity).digest('hex').slice(0, 8);
  const shown = label.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, '?');
  return `upstream:${shown.slice(0, MAX_CONCURRENCY_KEY_LENGTH - 18)}#${digest}`;
}

/** A tool's definition as the gateway serves it, calling `tool.name` upstream. */
function gatewayTool(
  upstream: Upstream,
  tool: UpstreamTool,
  settings: CatalogSettings,
  delivery: Delivery,
): ToolDefinition<never> {
  const def: ToolDefinition<JsonObject> = {
    name: `${settings.prefix ?? ''}${tool.name}`,
    task: taskPolicyOf(tool.name, settings),
    inputSchema: tool.inputSchema as JsonObject,
    handler: (args, ctx) => callUpstream(upstream, tool.name, args, ctx, delivery, settings),
  };
  if (tool.title !== undefined) def.title = tool.title;
  if (tool.description !== undefined) def.description = tool.description;
  if (tool.outputSchema !== undefined) def.outputSchema = tool.outputSchema as JsonObject;
  if (tool.annotations !== undefined) def.annotations = tool.annotations;
  if (tool.icons !== undefined) def.icons = tool.icons as ToolDefinition['icons'];
  return def as unknown as ToolDefinition<never>;
}

/**
 * The gateway's tool definitions for the upstream's tools. Throws, naming them, when an upstream tool would take a
 * name the gateway serves itself (the facade tools) or two would share one.
 */
export function catalogTools(
  upstream: Upstream,
  tools: UpstreamTool[],
  settings: CatalogSettings,
): ToolDefinition<never>[] {
  const reserved = new Set(settings.reserved ?? []);
  const seen = new Set<string>();
  const defs: ToolDefinition<never>[] = [];
  for (const tool of tools) {
    const name = `${settings.prefix ?? ''}${tool.name}`;
    if (reserved.has(name))
      throw new Error(
        `the upstream tool "${tool.name}" would be served as "${name}", a name the gateway's own tools use; ` +
          `put a prefix before the upstream's names (--tool-prefix) or rename the facade tools ` +
          `(--fallback-tool-prefix)`,
      );
    if (seen.has(name)) throw new Error(`the upstream lists the tool "${tool.name}" twice`);
    seen.add(name);
    defs.push(gatewayTool(upstream, tool, settings, deliveryOf(tool, settings)));
  }
  return defs;
}

/** Where the catalog's log lines go (the gateway's logger). */
export type CatalogLog = (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;

/** The server's registry, as the catalog changes it. */
export interface CatalogControl {
  addTool(tool: ToolDefinition<never>): void;
  removeTool(name: string): boolean;
}

/**
 * The upstream's tools as first read, and `refresh`, which serves its new and changed tools (run on each
 * tools/list_changed, followCatalog). A tool the upstream no longer lists stays served, so that its tasks in flight
 * finish; a new call of it gets the upstream's own answer.
 */
export async function readCatalog(
  upstream: Upstream,
  settings: CatalogSettings,
  log: CatalogLog,
): Promise<{ tools: ToolDefinition<never>[]; refresh: (control: CatalogControl) => Promise<void> }> {
  return catalogOf(upstream, await upstream.listTools(), settings, log);
}

/**
 * readCatalog on the tools the upstream listed (`listed`; none for an upstream that did not answer at start, whose
 * first successful `refresh` then serves them all); throws as catalogTools does.
 */
export function catalogOf(
  upstream: Upstream,
  listed: UpstreamTool[],
  settings: CatalogSettings,
  log: CatalogLog,
): { tools: ToolDefinition<never>[]; refresh: (control: CatalogControl) => Promise<void> } {
  const tools = catalogTools(upstream, listed, settings);
  return { tools, refresh: refresher(upstream, settings, log, tools) };
}

function refresher(
  upstream: Upstream,
  settings: CatalogSettings,
  log: CatalogLog,
  tools: ToolDefinition<never>[],
): (control: CatalogControl) => Promise<void> {
  const served = new Map(tools.map((tool) => [tool.name, JSON.stringify(tool)]));
  return async (control) => {
    const next = catalogTools(upstream, await upstream.listTools(), settings);
    for (const tool of next) {
      const shape = JSON.stringify(tool);
      if (served.get(tool.name) === shape) continue;
      if (served.has(tool.name)) control.removeTool(tool.name);
      control.addTool(tool);
      served.set(tool.name, shape);
      log('info', 'gateway: upstream tool served', { tool: tool.name });
    }
    const listed = new Set(next.map((tool) => tool.name));
    for (const name of served.keys())
      if (!listed.has(name))
        log('warn', 'gateway: the upstream no longer lists a tool; it stays served', { tool: name });
  };
}

/** The default interval between two reads of the upstream's tool list, list changes aside (CatalogFollow.intervalMs). */
export const DEFAULT_REFRESH_MS = 5 * 60_000;

/** The wait before reading a failed tool list again: 1 s after the first failure, doubling to 30 s. */
export function catalogRetryMs(failures: number): number {
  return backoffCeilingMs(failures - 1, 1_000, 30_000);
}

/**
 * Runs `refresh` on each tools/list_changed of the upstream, and every `intervalMs` (0: only on list changes), for an
 * upstream that changes its tools without saying so; with `readNow`, once at once too. A failed read is logged and
 * tried again after catalogRetryMs, until one succeeds. Returns the stopper of the timers.
 */
export function followCatalog(
  upstream: Upstream,
  refresh: (control: CatalogControl) => Promise<void>,
  control: CatalogControl,
  log: CatalogLog,
  intervalMs = DEFAULT_REFRESH_MS,
  options: { readNow?: boolean } = {},
): () => void {
  let running = false;
  let pending = false;
  let stopped = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  // One read at a time; a list change during a read makes one more read after it.
  const again = (): void => {
    if (stopped) return;
    if (running) {
      pending = true;
      return;
    }
    running = true;
    pending = false;
    clearTimeout(retry);
    retry = undefined;
    refresh(control)
      .then(
        () => {
          failures = 0;
        },
        (err: unknown) => {
          failures++;
          const retryMs = catalogRetryMs(failures);
          log('warn', 'gateway: cannot read the upstream tool list; trying again', {
            error: err instanceof Error ? err.message : String(err),
            failures,
            retryMs,
          });
          if (stopped) return;
          retry = setTimeout(again, retryMs);
          retry.unref();
        },
      )
      .finally(() => {
        running = false;
        if (pending) again();
      });
  };
  upstream.onToolsChanged(again);
  if (options.readNow === true) again();
  const timer = intervalMs <= 0 ? undefined : setInterval(again, intervalMs);
  timer?.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
    clearTimeout(retry);
  };
}
