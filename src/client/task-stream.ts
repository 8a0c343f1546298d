// One push stream of one task (subscriptions/listen with its id) and how it ended: after an end the client polls and
// subscribes again, unless the server has no push for the task.
import { ErrorCode } from '../wire/codes.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { ProtocolError } from '../wire/protocol-error.js';
import { StreamEndedError } from './errors.js';
import type { TaskClient } from './task-client.js';
import { backoffMs } from '../pacing/backoff.js';

/**
 * `unsupported`: the server has no push for this task (no listen method, no `taskIds`, or the task not
 * acknowledged), so polling is the only way. `ended`: a stream failed to open, or opened and ended (the server
 * closing or restarting, a balancer's cut); `openMs` is how long it was open, if it was, and `retryMs` the
 * reconnection time the stream asked for with its `retry` field, if it did.
 */
export type StreamEnd =
  { kind: 'unsupported' } | { kind: 'ended'; openMs: number | undefined; retryMs: number | undefined };

/** A stream open this long ended for an ordinary reason (a restart, a cut): the back-off starts over. */
export const STREAM_LIVED_MS = 10_000;

/** The wait before subscribing again after `failures` streams in a row ended soon: 250 ms doubling to 10 s. */
export const resubscribeDelayMs = (failures: number, random?: () => number): number =>
  backoffMs(failures, 250, 10_000, random);

/** The longest reconnection time a stream's `retry` field is followed to (polling goes on meanwhile). */
export const MAX_STREAM_RETRY_MS = 60_000;

/**
 * The wait before subscribing again: the back-off, or the reconnection time the stream that ended asked for when it
 * is longer (up to MAX_STREAM_RETRY_MS).
 */
export const resubscribeAfterMs = (end: StreamEnd, failures: number, random?: () => number): number =>
  Math.max(
    Math.min(end.kind === 'ended' ? (end.retryMs ?? 0) : 0, MAX_STREAM_RETRY_MS),
    resubscribeDelayMs(failures, random),
  );

/** Whether a refused listen may be accepted later: the server was starting, draining, overloaded or failing. */
function mayOpenLater(err: unknown): boolean {
  if (!(err instanceof ProtocolError)) return true;
  const status = err.httpStatus ?? 0;
  return (
    status >= 500 ||
    status === 429 ||
    err.code === ErrorCode.InternalError ||
    err.code === ErrorCode.TooManyRequests
  );
}

/** Listens to one task until the stream ends or `signal` aborts; every pushed DetailedTask goes to `enqueue`. */
export async function listenToTask(
  client: TaskClient,
  taskId: string,
  enqueue: (task: JsonObject) => void,
  signal: AbortSignal,
): Promise<StreamEnd> {
  const listen = new AbortController();
  const stop = (): void => listen.abort();
  signal.addEventListener('abort', stop, { once: true });
  let ackedAt: number | undefined;
  let refused = false;
  let retryMs: number | undefined;
  const onNotification = (m: JsonObject): void => {
    const params = isJsonObject(m.params) ? m.params : undefined;
    if (m.method === 'notifications/subscriptions/acknowledged') {
      const ids = isJsonObject(params?.notifications) ? params.notifications.taskIds : undefined;
      if (Array.isArray(ids) && ids.includes(taskId)) ackedAt = Date.now();
      else {
        // Not acknowledged (unknown, foreign or expired): polling will report why.
        refused = true;
        listen.abort();
      }
    } else if (m.method === 'notifications/tasks' && params?.taskId === taskId) {
      const { _meta: _ignored, ...task } = params;
      enqueue(task);
    }
  };
  try {
    await client.request(
      'subscriptions/listen',
      { notifications: { taskIds: [taskId] } },
      { signal: listen.signal, onNotification },
    );
    // Answered: a graceful end after the acknowledgement, or a server that never opened a stream.
    if (ackedAt === undefined) return { kind: 'unsupported' };
  } catch (err) {
    if (err instanceof StreamEndedError) retryMs = err.retryMs;
    if (refused || (!signal.aborted && !mayOpenLater(err))) return { kind: 'unsupported' };
  } finally {
    signal.removeEventListener('abort', stop);
  }
  return { kind: 'ended', openMs: ackedAt === undefined ? undefined : Date.now() - ackedAt, retryMs };
}
