// A task's story for people (`task inspect`, `admin tasks get`): its statuses on a timeline, its steps' durations.
import { stepDuration, type InspectedStep, type TaskInspection } from '../tasks/inspection.js';
import { oneLine, terminalLine } from './terminal-text.js';

const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
/** The time of day (UTC) to the millisecond: `12:00:01.234`. */
const timeOfDay = (ms: number): string => new Date(ms).toISOString().slice(11, 23);
const known = (ms: number): boolean => Number.isFinite(ms);

/**
 * The history lines: a header, then one line per status (`12:00:01.234 input_required: waiting for approval`), the
 * date again whenever the day changes. A history that does not begin with the creation (a task stored before the
 * store kept histories, or one whose oldest entries were let go) says where it starts. None for a store without one.
 */
export function historyLines(t: TaskInspection): string[] {
  const history = t.history;
  if (history === undefined) return [];
  const first = history[0];
  if (first === undefined) return ['  history: none recorded (the task predates it)'];
  const complete = first.at === t.createdAt && first.status === 'working';
  const lines = [
    complete ? '  history (UTC):' : `  history (UTC) starts at ${new Date(first.at).toISOString()}:`,
  ];
  let shownDay = known(t.createdAt) ? day(t.createdAt) : undefined;
  for (const change of history) {
    if (!known(change.at)) {
      lines.push(oneLine`    - ${change.status}`);
      continue;
    }
    const prefix = day(change.at) === shownDay ? '' : `${day(change.at)} `;
    shownDay = day(change.at);
    const message = change.statusMessage === undefined ? '' : oneLine`: ${change.statusMessage}`;
    lines.push(`    ${prefix}${timeOfDay(change.at)} ${terminalLine(change.status)}${message}`);
  }
  return lines;
}

/** How a done step's timing reads: `in 12 ms (started 12:00:01.222)`, or that it is unknown. */
export function stepTiming(step: InspectedStep): string | undefined {
  if (!step.done) return undefined;
  const ms = stepDuration(step);
  if (ms === undefined || step.startedAt === undefined || !Number.isFinite(ms)) return '(time unknown)';
  return `in ${ms} ms (started ${timeOfDay(step.startedAt)})`;
}
