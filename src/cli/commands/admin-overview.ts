// `durable-mcp admin overview`: task counts by status and tool, recent activity and stuck tasks, as operators see them.
import { adminApiFromFlags } from '../admin-api.js';
import { reportAdminError } from '../admin-report.js';
import { describeOverview } from '../admin-view.js';
import { parseFlags, UsageError } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, EXIT, jsonOutput } from '../client-flags.js';
import { parseDuration } from '../durations.js';
import { printJson, printOut } from '../terminal-text.js';

export const overviewUsage = `durable-mcp admin overview [--windows 1h,24h] [--stuck 15m] [flags]   (operators)
  counts of tasks by status and by tool, tasks created/completed/failed in recent windows, and stuck tasks
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
    const body = (await api.get('/overview', query)) as Record<string, unknown>;
    if (json) printJson(body);
    else printOut(describeOverview(body, stuckMs));
    return EXIT.ok;
  } catch (err) {
    return reportAdminError(err, api.base);
  }
}
