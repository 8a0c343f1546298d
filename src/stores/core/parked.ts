// The stats of tasks parked for a concurrency slot (TaskStats.parked, parkedByTool), of tasks paused by an operator
// (TaskStats.paused, pausedByTool) and of tasks waiting for a start reserved under a rate limit (rateWaitsByTool),
// from a store's counts by tool.
import type { TaskStats } from '../../tasks/store.js';

type ToolCounts = readonly { tool: string; n: number | string }[];

const total = (rows: ToolCounts): number => rows.reduce((sum, r) => sum + Number(r.n), 0);
const byTool = (rows: ToolCounts): Record<string, number> =>
  Object.fromEntries(rows.map((r) => [r.tool, Number(r.n)]));

/** The total and the counts by tool of the parked tasks, from rows of (tool, count). */
export function parkedStats(rows: ToolCounts): Required<Pick<TaskStats, 'parked' | 'parkedByTool'>> {
  return { parked: total(rows), parkedByTool: byTool(rows) };
}

/** The total and the counts by tool of the paused tasks, from rows of (tool, count). */
export function pausedStats(rows: ToolCounts): Required<Pick<TaskStats, 'paused' | 'pausedByTool'>> {
  return { paused: total(rows), pausedByTool: byTool(rows) };
}

/** The counts by tool of the tasks waiting for the start reserved under their rate limit. */
export function rateWaitStats(rows: ToolCounts): Required<Pick<TaskStats, 'rateWaitsByTool'>> {
  return { rateWaitsByTool: byTool(rows) };
}
