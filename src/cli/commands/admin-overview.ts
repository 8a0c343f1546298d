// `durable-mcp admin overview`: task counts by status and tool, recent activity and stuck tasks, as operators see them.
import type { HealthJson, OverviewJson } from '../../admin/shapes.js';
import { AdminApiError, adminApiFromFlags, type Answer } from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { describeHealth, describeOverview } from '../admin-view.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, EXIT, jsonOutput } from '../client-flags.js';
import { parseDuration } from '../durations.js';
import { printJson, printOut } from '../terminal-text.js';

export const overviewUsage = `durable-mcp admin overview [--windows 1h,24h] [--stuck 15m] [flags]   (operators)
  counts of tasks by status and by tool, tasks created/completed/failed in recent windows, and stuck tasks;
  then the health the server reports (a gateway: its upstream, up or down since when, calls and errors)
  --windows D1,D2   the recent windows (default 1h,24h)
  --stuck D         unfinished tasks not updated for this long count as stuck (default 15m)
                    durations: ms, or a number with a unit: 30s, 15m, 1h, 7d
${clientFlagsHelp}`;

const OVERVIEW_FLAGS = { ...CLIENT_FLAGS, windows: { type: 'string' }, stuck: { type: 'string' } } as const;

function duration(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new UsageError(`--${flag}: "${text}" is not a duration (ms, or 30s, 15m, 1h, 7d)`);
  return ms;
}

export async function overview(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(argv, OVERVIEW_FLAGS, true);
  if (positionals.length > 1) throw new UsageError(`unexpected "${positionals[1]}"\n\n${overviewUsage}`);
  const json = jsonOutput(values);
  const windows = String(values.windows ?? '1h,24h')
    .split(',')
    .map((w) => duration(w, 'windows'));
  const stuckMs = duration(String(values.stuck ?? '15m'), 'stuck');
  const api = adminApiFromFlags(values);
  const query = new URLSearchParams({ windows: windows.join(','), stuckMs: String(stuckMs) });
  try {
    const body = (await api.get('/overview', query)) as Answer<OverviewJson>;
    // The server's health beside the counts (a server before it has none: 404).
    const health = (await api.get('/health').catch((err: unknown) => {
      if (err instanceof AdminApiError && err.status === 404) return undefined;
      throw err;
    })) as Answer<HealthJson> | undefined;
    if (json) printJson(health === undefined ? body : { ...body, health });
    else {
      printOut(describeOverview(body, stuckMs));
      if (health !== undefined) printOut(describeHealth(health));
    }
    return EXIT.ok;
  } catch (err) {
    return reportAdminError(err, api.base);
  }
}
