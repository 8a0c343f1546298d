// The stats of tasks parked for a concurrency slot (TaskStats.parked, parkedByTool), from a store's count by tool.
import type { TaskStats } from '../../tasks/store.js';

/** The total and the counts by tool of the parked tasks, from rows of (tool, count). */
export function parkedStats(
  rows: readonly { tool: string; n: number }[],
): Required<Pick<TaskStats, 'parked' | 'parkedByTool'>> {
  return {
    parked: rows.reduce((sum, r) => sum + Number(r.n), 0),
    parkedByTool: Object.fromEntries(rows.map((r) => [r.tool, Number(r.n)])),
  };
}
