// The people's view of the operator API's answers: a task table, a task's detail (as `task inspect` shows it), the
// overview. The API's JSON is read defensively: a field it lacks prints as `-`, never as a crash.
import type {
  FlowJson,
  FlowKeyJson,
  HealthComponentJson,
  HealthJson,
  OverviewJson,
  PauseJson,
  TaskDetailJson,
  TaskRowJson,
  TaskStepJson,
  TaskUpstreamJson,
} from '../admin/shapes.js';
import type { Answer } from './admin-api.js';
import type { StepFailure, TaskFailure, TaskOutcome, TaskStatus } from '../tasks/task.js';
import type { InspectedStep, TaskInspection } from '../tasks/inspection.js';
import { TASK_OUTCOMES, TASK_STATUSES } from '../tasks/task.js';
import { formatDuration } from './durations.js';
import { oneLine, terminalLine } from './terminal-text.js';

const ERROR_WIDTH = 60;

const str = (v: unknown): string => (v === undefined || v === null || v === '' ? '-' : String(v));

/** An ISO time to the second, as a table shows it (`2026-01-31 12:00:00`); anything else as it came. */
export function shortTime(value: unknown): string {
  if (typeof value !== 'string') return str(value);
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 19).replace('T', ' ') : str(value);
}

export function shorten(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= width ? flat : `${flat.slice(0, width - 1)}…`;
}

const toolLabel = (tool: unknown, version: unknown): string =>
  typeof version === 'string' && version !== '' ? `${str(tool)}@${version}` : str(tool);

/** Columns padded to their widest cell; the last one is not padded. Each cell is one line, escaped. */
function table(cells: string[][]): string {
  const rows = cells.map((r) => r.map(terminalLine));
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function taskTable(items: readonly TaskRowJson[]): string {
  if (items.length === 0) return 'no tasks match';
  const head = ['ID', 'STATUS', 'OUTCOME', 'TOOL', 'OWNER', 'CREATED', 'UPDATED', 'ATTEMPT', 'ERROR'];
  const rows = items.map((t) => [
    str(t.id),
    str(t.status),
    str(t.outcome),
    toolLabel(t.tool, t.toolVersion),
    `${str(t.tenant)}/${str(t.principal)}`,
    shortTime(t.createdAt),
    shortTime(t.updatedAt),
    str(t.attempt),
    t.error === undefined ? '' : shorten(str(t.error.message), ERROR_WIDTH),
  ]);
  return table([head, ...rows]);
}

const msOf = (value: unknown): number => (typeof value === 'string' ? Date.parse(value) : Number(value));
const optionalMs = (value: unknown): number | undefined => (value === undefined ? undefined : msOf(value));

/** The objects of a list the API sent (anything else in it, or a list absent, is left out). */
const entries = <T>(list: unknown): Answer<T>[] =>
  Array.isArray(list)
    ? (list as unknown[]).filter((e): e is Answer<T> => typeof e === 'object' && e !== null)
    : [];

/** A step's timings from the API (ISO times), those it has. */
function timesOf(step: Answer<TaskStepJson>): Pick<InspectedStep, 'startedAt' | 'savedAt'> {
  const times: Pick<InspectedStep, 'startedAt' | 'savedAt'> = {};
  if (typeof step.startedAt === 'string') times.startedAt = msOf(step.startedAt);
  if (typeof step.savedAt === 'string') times.savedAt = msOf(step.savedAt);
  return times;
}

/** The status history from the API (absent when the server's store keeps none). */
/** The child tasks of a detail, as the server sent them (each field a string, or left out). */
function childrenOf(children: unknown): Pick<TaskInspection, 'children'> {
  if (!Array.isArray(children)) return {};
  return {
    children: children.map((c: Record<string, unknown>) => ({
      id: String(c.id),
      tool: String(c.tool),
      status: String(c.status) as TaskStatus,
    })),
  };
}

function historyOf(history: unknown): Pick<TaskInspection, 'history'> {
  if (!Array.isArray(history)) return {};
  return {
    history: entries<NonNullable<TaskDetailJson['history']>[number]>(history).map((e) => ({
      at: msOf(e.at),
      status: e.status as TaskStatus,
      ...(typeof e.statusMessage === 'string' ? { statusMessage: e.statusMessage } : {}),
    })),
  };
}

/** A task's outcome from the API, if it is one. */
const outcomeOf = (v: unknown): TaskOutcome | undefined =>
  (TASK_OUTCOMES as readonly unknown[]).includes(v) ? (v as TaskOutcome) : undefined;

/** `GET /tasks/{id}` as the inspection `task inspect` prints: ISO times back to ms. */
export function inspectionOf(d: Answer<TaskDetailJson>): TaskInspection {
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const withAt = <T extends { at: number }>(v: unknown): T | undefined =>
    typeof v === 'object' && v !== null ? ({ ...v, at: msOf((v as { at?: unknown }).at) } as T) : undefined;
  const steps = entries<TaskStepJson>(d.steps);
  return {
    id: str(d.id),
    owner: { tenant: str(d.tenant), principal: str(d.principal) },
    tool: str(d.tool),
    toolVersion: text(d.toolVersion),
    status: d.status as TaskStatus,
    outcome: outcomeOf(d.outcome),
    statusMessage: text(d.statusMessage),
    createdAt: msOf(d.createdAt),
    updatedAt: msOf(d.updatedAt),
    expiresAt: d.expiresAt === undefined || d.expiresAt === null ? null : msOf(d.expiresAt),
    attempt: Number(d.attempt),
    leaseOwner: text(d.leaseOwner),
    leaseUntil: optionalMs(d.leaseUntil),
    wakeAt: optionalMs(d.wakeAt),
    cancelRequested: d.cancelRequested === true,
    idempotencyKey: text(d.idempotencyKey),
    ...(typeof d.traceId === 'string' ? { traceId: d.traceId } : {}),
    retryOf: text(d.retryOf),
    ...(Array.isArray(d.retries) ? { retries: (d.retries as unknown[]).map(String) } : {}),
    ...(typeof d.parentId === 'string' ? { parentId: d.parentId } : {}),
    ...childrenOf(d.children),
    steps: steps.map((s) => ({
      name: str(s.name),
      done: s.done === true,
      failedAttempts: Number(s.failedAttempts ?? 0),
      lastFailure: withAt<StepFailure>(s.lastFailure),
      ...timesOf(s),
    })),
    ...historyOf(d.history),
    ...(Array.isArray(d.pendingInputs) ? { pendingInputs: (d.pendingInputs as unknown[]).map(String) } : {}),
    failure: withAt<TaskFailure>(d.failure),
    error: d.error as TaskInspection['error'],
  };
}

/** `GET /overview` for people: statuses, stuck tasks, the windows, then each tool's counts. */
export function describeOverview(o: Answer<OverviewJson>, stuckMs: number): string {
  const byStatus = (o.byStatus ?? {}) as Record<string, unknown>;
  const byOutcome = (o.byOutcome ?? {}) as Record<string, unknown>;
  const lines = [oneLine`tasks: ${TASK_STATUSES.map((s) => `${s} ${str(byStatus[s] ?? 0)}`).join(', ')}`];
  lines.push(oneLine`finished: ${TASK_OUTCOMES.map((s) => `${s} ${str(byOutcome[s] ?? 0)}`).join(', ')}`);
  lines.push(oneLine`stuck (unfinished, not updated for ${formatDuration(stuckMs)}): ${str(o.stuck)}`);
  for (const w of entries<OverviewJson['windows'][number]>(o.windows)) {
    const counts = `created ${str(w.created)}, completed ${str(w.completed)}, failed ${str(w.failed)}`;
    lines.push(
      oneLine`last ${formatDuration(Number(w.windowMs))}: ${counts}, tool errors ${str(w.toolErrors)}`,
    );
  }
  const tools = new Map<string, string[]>();
  for (const t of entries<OverviewJson['byTool'][number]>(o.byTool)) {
    const label = terminalLine(toolLabel(t.tool, t.toolVersion));
    tools.set(label, [...(tools.get(label) ?? []), oneLine`${str(t.status)} ${str(t.count)}`]);
  }
  if (tools.size > 0) {
    const width = Math.max(...[...tools.keys()].map((k) => k.length));
    lines.push(
      'by tool:',
      ...[...tools].map(([label, counts]) => `  ${label.padEnd(width)}  ${counts.join(', ')}`),
    );
  }
  return lines.join('\n');
}

const DISPATCH_TEXT: Record<string, string> = {
  not_dispatched: 'not dispatched (nothing was sent upstream)',
  dispatched: 'dispatched: sent, no answer kept (the upstream may have done it)',
  answered: 'answered (the upstream’s answer is kept)',
  following: 'following upstream task',
};

/**
 * A gateway task's upstream call and, for an outcome-unknown task, what an operator can do (undefined: not a gateway
 * task, or a server that is not a gateway).
 */
export function describeUpstream(d: Answer<TaskDetailJson>): string | undefined {
  const up = d.upstream as Answer<TaskUpstreamJson> | undefined;
  const error = d.error as Answer<NonNullable<TaskDetailJson['error']>> | undefined;
  const lines: string[] = [];
  if (typeof up === 'object' && up !== null) {
    const state = DISPATCH_TEXT[str(up.dispatch)] ?? str(up.dispatch);
    const id = up.dispatch === 'following' ? ` ${str(up.upstreamTaskId)}` : '';
    lines.push(oneLine`upstream: ${str(up.upstream)}`, oneLine`dispatch: ${state}${id}`);
  }
  if (error?.outcome === 'unknown') {
    // The step of the round that was sent; none once an answer is kept (an upstream task that was lost).
    const record = typeof up?.recordStep === 'string' ? up.recordStep : up === undefined ? 'STEP' : undefined;
    lines.push(
      'outcome unknown: check with the upstream whether it did the call, then either',
      oneLine`  send it again:        durable-mcp admin tasks retry ${str(d.id)}`,
      record === undefined
        ? '  record what it did:  not possible, the upstream’s answer is kept (retry sends the call anew)'
        : oneLine`  record what it did:  durable-mcp admin tasks retry ${str(d.id)} --record-step ${record} --value @result.json`,
      '  or leave it failed (nothing to do: a failed task stays failed).',
    );
  }
  return lines.length === 0 ? undefined : lines.join('\n');
}

const count = (n: unknown, noun: string): string => `${str(n)} ${noun}${n === 1 ? '' : 's'}`;

/** `GET /health` for people: one line per component (none: the line says so). */
export function describeHealth(h: Answer<HealthJson>): string {
  const components = entries<HealthComponentJson>(h.components);
  if (components.length === 0) return 'health: nothing reported (not a gateway)';
  return components
    .map((c) => {
      const since = c.since === undefined ? '' : oneLine` since ${shortTime(c.since)}`;
      const mean = c.meanMs === undefined ? '' : oneLine`, mean ${str(c.meanMs)} ms`;
      const counts = `${count(c.calls, 'call')}, ${count(c.errors, 'error')}`;
      return oneLine`${str(c.kind)} ${str(c.name)}: ${str(c.status)}${since}; ${counts}${mean}`;
    })
    .join('\n');
}

/** `GET /flow` for people: a table of the keys at their limit, then one of the pauses in force. */
export function describeFlow(f: Answer<FlowJson>): string {
  const keys = entries<FlowKeyJson>(f.keys);
  const pauses = entries<PauseJson>(f.pauses);
  const out = [
    keys.length === 0
      ? 'no concurrency key has tasks waiting for a slot'
      : table([
          ['KEY', 'LIMIT', 'HELD', 'WAITING'],
          ...keys.map((k) => [str(k.key), str(k.limit), str(k.slotsHeld), str(k.parked)]),
        ]),
  ];
  if (f.limited === true) out.push('(more keys have tasks waiting: raise --max to see them)');
  out.push(
    '',
    pauses.length === 0
      ? 'nothing is paused'
      : table([
          ['PAUSED', 'NAME', 'TENANT', 'SINCE', 'TASKS'],
          ...pauses.map((p) => [
            str(p.kind),
            str(p.name),
            p.tenant === undefined ? '(all)' : str(p.tenant),
            shortTime(p.pausedAt),
            str(p.pausedTasks),
          ]),
        ]),
  );
  return out.join('\n');
}
