// Operator list rows: the operators' list page (one tool's newest tasks) on stores of 1k and of 1M completed tasks,
// on SQLite (the stored-task files of the tasks/get scale rows) and on PostgreSQL (schemas of their own).
import { ADMIN_PAGE, SCALE_GET_MAX_SECONDS, SCALE_LARGE, SCALE_SMALL, SCALE_TOOLS } from '../config.js';
import { fmtCount } from '../format.js';
import { listToolTasks } from '../harness/requests.js';
import { timeSequentialGets } from '../harness/sequential-gets.js';
import type { LatencyScenario, RowState, TargetView } from '../types.js';
import { OPS_SMALL_ROW, PG_OPS_SMALL_ROW } from './names.js';

/** Setup of an operator list row: the tools asked for in turn (one per request), carried on across runs. */
const toolsState = (): RowState => ({ ids: [...SCALE_TOOLS], next: 0 });

interface ListAnswer {
  items?: Array<{ tool?: unknown; createdAt?: unknown }>;
  next?: unknown;
}

/** A full page of the tool's tasks, newest first, with a cursor to the next page (every tool has more tasks). */
function checkPage(text: string, tool: string): string | undefined {
  const page = JSON.parse(text) as ListAnswer;
  const items = page.items ?? [];
  if (items.length !== ADMIN_PAGE) return `expected ${ADMIN_PAGE} tasks, got ${items.length}`;
  const other = items.find((item) => item.tool !== tool);
  if (other !== undefined) return `a task of tool ${String(other.tool)} in the page of ${tool}`;
  const times = items.map((item) => Date.parse(String(item.createdAt)));
  if (times.some((t, i) => !Number.isFinite(t) || (i > 0 && t > times[i - 1]!))) return 'not newest first';
  if (typeof page.next !== 'string') return 'no cursor to the next page';
  return undefined;
}

/**
 * GET /admin/api/v1/tasks?tool=…&limit=ADMIN_PAGE, one request at a time over one keep-alive connection, for
 * `seconds` (at most SCALE_GET_MAX_SECONDS), each request for the next of SCALE_TOOLS; the first answer of each run
 * is checked in full (checkPage), every answer must be HTTP 200.
 */
function listPages(target: TargetView, state: RowState | undefined, runSeconds: number) {
  const s = state!;
  const first = s.next ?? 0;
  const toolAt = (n: number) => s.ids[n % s.ids.length]!;
  return timeSequentialGets(
    target,
    Math.min(runSeconds, SCALE_GET_MAX_SECONDS),
    () => {
      const next = s.next ?? 0;
      s.next = next + 1;
      return listToolTasks(toolAt(next), ADMIN_PAGE);
    },
    (text) => checkPage(text, toolAt(first)),
  );
}

/** The 1M row's target: its p50 within this × the 1k row's. */
const P50_RATIO = 1.5;

const rows = (store: 'SQLite' | 'PostgreSQL', smallRow: string): LatencyScenario[] => {
  const pg = store === 'PostgreSQL';
  const base = {
    kind: 'latency' as const,
    needs: pg ? ('pg-scale' as const) : ('scale' as const),
    setup: toolsState,
    run: listPages,
  };
  return [
    { ...base, name: smallRow, server: pg ? 'ours-pg-ops-small' : 'ours-small', baseline: null },
    {
      ...base,
      name: `ours ${pg ? 'pg ' : ''}operator task list, ${fmtCount(SCALE_LARGE)} stored tasks (sequential)`,
      server: pg ? 'ours-pg-ops-large' : 'ours-large',
      baseline: smallRow,
      target: {
        text: `p50 within ${P50_RATIO} × ${fmtCount(SCALE_SMALL)} stored tasks (p50)`,
        p50Ratio: P50_RATIO,
      },
    },
  ];
};

/** On the stored-task files of the tasks/get scale rows (served with --dev-operator). */
export const operatorRows = rows('SQLite', OPS_SMALL_ROW);
/** On two PostgreSQL schemas of their own (bench/harness/pg-fill.ts). */
export const pgOperatorRows = rows('PostgreSQL', PG_OPS_SMALL_ROW);
