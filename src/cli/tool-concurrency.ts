// --tool-concurrency TOOL=N (serve): sets or overrides the concurrency limit of a tool served, by its name.
import type { ToolDefinition, ToolSet } from '../protocol/define.js';
import { MAX_CONCURRENCY_LIMIT } from '../tasks/concurrency.js';
import { UsageError } from './args.js';

const ENTRY = /^([^=]+)=(\d+)$/;

/** The limits the flag's entries set, by tool name (a later entry for a tool wins). */
export function parseToolConcurrency(entries: readonly string[]): Map<string, number> {
  const limits = new Map<string, number>();
  for (const entry of entries) {
    const m = ENTRY.exec(entry.trim());
    const n = m === null ? NaN : Number(m[2]);
    if (m === null || !Number.isSafeInteger(n) || n < 1 || n > MAX_CONCURRENCY_LIMIT)
      throw new UsageError(
        `--tool-concurrency takes TOOL=N, N a whole number from 1 to ${MAX_CONCURRENCY_LIMIT} (got "${entry}")`,
      );
    limits.set((m[1] as string).trim(), n);
  }
  return limits;
}

/**
 * The tool sets with the limits applied: a tool's own key (default: its name) is kept, its limit replaced. A name no
 * set serves, or a tool that never runs as a task, is a usage error.
 */
export function withToolConcurrency(toolSets: ToolSet[], limits: ReadonlyMap<string, number>): ToolSet[] {
  if (limits.size === 0) return toolSets;
  const served = new Map<string, ToolDefinition<never>>();
  for (const set of toolSets) for (const tool of set.tools ?? []) served.set(tool.name, tool);
  for (const name of limits.keys()) {
    const tool = served.get(name);
    if (tool === undefined)
      throw new UsageError(
        `--tool-concurrency: no tool "${name}" is served (tools: ${[...served.keys()].join(', ') || 'none'})`,
      );
    if (tool.task === undefined || tool.task.support === 'never')
      throw new UsageError(`--tool-concurrency: tool "${name}" does not run as a task`);
  }
  const limited = (tool: ToolDefinition<never>): ToolDefinition<never> => {
    const limit = limits.get(tool.name);
    if (limit === undefined || tool.task === undefined) return tool;
    return { ...tool, task: { ...tool.task, concurrency: { ...tool.task.concurrency, limit } } };
  };
  return toolSets.map((set) => (set.tools === undefined ? set : { ...set, tools: set.tools.map(limited) }));
}
