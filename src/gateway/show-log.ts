// An upstream's log message about a call, as the gateway shows it: to the caller who asked for its level, and as the
// task's status message.
import type { HandlerContext } from '../protocol/tool-types.js';
import type { JsonValue } from '../protocol/types.js';
import { LOG_LEVELS, type LogLevel } from '../wire/meta-keys.js';

/** The longest status a log message of the upstream's becomes (the rest is cut, with an ellipsis). */
export const MAX_LOG_STATUS_CHARS = 500;

/**
 * An upstream log message about the call: passed on to a caller who asked for that level (ctx.log), and, in a task,
 * at `info` or above, shown as the task's statusMessage (coalesced with its progress, as ctx.status is). Its text is
 * the upstream's, bounded; a level the wire does not know counts as `info`.
 */
export function showLog(ctx: HandlerContext, level: string, data: unknown, logger: string | undefined): void {
  const known = (LOG_LEVELS as readonly string[]).includes(level) ? (level as LogLevel) : 'info';
  const value = (data === undefined ? null : data) as JsonValue;
  ctx.log(known, value, logger);
  if (ctx.taskId === undefined || LOG_LEVELS.indexOf(known) < LOG_LEVELS.indexOf('info')) return;
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length > MAX_LOG_STATUS_CHARS) text = `${text.slice(0, MAX_LOG_STATUS_CHARS - 1)}…`;
  if (text.trim() === '') return;
  ctx.status(text).catch(() => undefined);
}
