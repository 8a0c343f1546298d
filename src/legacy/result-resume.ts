// Resumable tasks/result on the 2025-11-25 wire. The wait runs on an event stream in windows of bounded length:
// each window's events carry an id naming the wait (task, request id, input keys already asked); when a window ends
// before the task does, the stream closes with a `retry` hint and the client reconnects with GET and that id as
// Last-Event-ID (the 2025-11-25 transport's resumption), on any replica. The id needs no secret: the task is looked
// up for the caller as on every request, and the request id is the client's own.

/** What a resumed GET goes on with. */
export interface ResumedWait {
  taskId: string;
  requestId: string | number;
  asked: string[];
}

const WAIT_PREFIX = 'tr1.';
/** The id of a wait's final event: a stream resumed from it has nothing more to send. */
export const WAIT_DONE_ID = 'tr1-done';
/** The reconnection delay suggested when a window ends (the SSE `retry` field). */
export const RESUME_RETRY_MS = 1_000;

/** Most input keys a token lists, and longest string it keeps: a Last-Event-ID stays a small header. */
const MAX_ASKED = 64;
const MAX_TEXT = 256;

export const waitEventId = (wait: ResumedWait): string =>
  `${WAIT_PREFIX}${Buffer.from(JSON.stringify([wait.taskId, wait.requestId, wait.asked])).toString('base64url')}`;

const shortText = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_TEXT;

/** The wait a Last-Event-ID names, 'done' for a finished one, or undefined for any other id. */
export function parseWaitEventId(id: string | undefined): ResumedWait | 'done' | undefined {
  if (id === undefined) return undefined;
  if (id === WAIT_DONE_ID) return 'done';
  if (!id.startsWith(WAIT_PREFIX) || id.length > 4 * MAX_TEXT * (MAX_ASKED + 2)) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(id.slice(WAIT_PREFIX.length), 'base64url').toString());
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  const [taskId, requestId, asked] = value as unknown[];
  const idOk = shortText(requestId) || (typeof requestId === 'number' && Number.isSafeInteger(requestId));
  if (!shortText(taskId) || !idOk || !Array.isArray(asked) || asked.length > MAX_ASKED) return undefined;
  if (!asked.every(shortText)) return undefined;
  return { taskId, requestId: requestId as string | number, asked: asked as string[] };
}

/** Thrown by a wait whose window ended before the task did: its stream closes for the client to resume. */
export class WaitPaused extends Error {
  constructor() {
    super('tasks/result paused for resumption');
  }
}
