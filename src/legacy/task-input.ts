// Mid-task input on the legacy wire: each outstanding input request of a task goes to the client as a real
// server→client request whose id names the task, the input key and the attempt, so the answer, POSTed to any
// replica, is written into that task's input records (the modern tasks/update), whoever is waiting for it. An answer
// that does not answer its question is refused there (HTTP 400) and reported to the wait, which asks again.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { ProtocolError } from '../wire/protocol-error.js';
import type { LegacyCall } from './call.js';
import { callModern } from './modern.js';

export const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const PREFIX = 'task-input:';

/** How often one question is asked again after refused answers, within one wait. */
const MAX_ATTEMPTS = 5;

export const inputRequestId = (taskId: string, key: string, attempt = 0): string =>
  `${PREFIX}${Buffer.from(JSON.stringify(attempt === 0 ? [taskId, key] : [taskId, key, attempt])).toString('base64url')}`;

/** The task and input key a server→client request id names, or undefined for other ids. */
export function parseInputRequestId(id: unknown): { taskId: string; key: string } | undefined {
  if (typeof id !== 'string' || !id.startsWith(PREFIX)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(id.slice(PREFIX.length), 'base64url').toString());
    if (
      Array.isArray(value) &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      (value.length === 2 || (value.length === 3 && Number.isSafeInteger(value[2])))
    ) {
      return { taskId: value[0], key: value[1] };
    }
  } catch {
    // not one of ours
  }
  return undefined;
}

/**
 * Asks a task's outstanding input on one response stream, each key once, and again when its answer was refused
 * (`onRefused` wakes the wait so that it asks at once). `stop()` ends the following of refusals.
 */
export class TaskInputAsker {
  private readonly attempts = new Map<string, number>();
  private readonly stopping = new AbortController();

  constructor(
    private readonly call: LegacyCall,
    private readonly taskId: string,
    /** Keys asked on this wait's streams (those of an earlier stream come from its event id). */
    readonly asked: Set<string>,
    private readonly onRefused: () => void,
  ) {}

  /** Sends the requests for the keys not asked yet; returns how many went out. */
  ask(requests: JsonObject): number {
    let sent = 0;
    for (const [key, request] of Object.entries(requests)) {
      if (this.asked.has(key) || !isJsonObject(request) || typeof request.method !== 'string') continue;
      const attempt = this.attempts.get(key) ?? 0;
      if (attempt >= MAX_ATTEMPTS) continue;
      this.asked.add(key);
      this.attempts.set(key, attempt + 1);
      const params = isJsonObject(request.params) ? { ...request.params } : {};
      params._meta = {
        ...(isJsonObject(params._meta) ? params._meta : {}),
        [RELATED_TASK]: { taskId: this.taskId },
      };
      const id = inputRequestId(this.taskId, key, attempt);
      // Followed before it is sent: a refusal may come back at once.
      const news = this.call.follow(id, this.stopping.signal);
      this.call.sendRequest(id, request.method, params);
      void news.then(
        (news) => {
          if (news === undefined) return;
          this.asked.delete(key);
          this.onRefused();
        },
        () => undefined, // the session store is unreachable: the question is not asked again
      );
      sent++;
    }
    return sent;
  }

  stop(): void {
    this.stopping.abort();
  }
}

/** Whether an error refuses an answer for not answering its question (answerRefused). */
export const refusesAnswer = (err: unknown): err is ProtocolError =>
  err instanceof ProtocolError && isJsonObject(err.data) && typeof err.data.inputKey === 'string';

/**
 * Writes one answer into the task's input records (owner-scoped: only the caller's own tasks). Returns the refusal
 * when the answer does not answer its question; other failures (an unknown task, a store outage) leave it unwritten.
 */
export async function answerInput(
  call: LegacyCall,
  target: { taskId: string; key: string },
  result: JsonObject,
): Promise<ProtocolError | undefined> {
  try {
    await callModern(
      call,
      'tasks/update',
      { taskId: target.taskId, inputResponses: { [target.key]: result } },
      true,
    );
    return undefined;
  } catch (err) {
    return refusesAnswer(err) ? err : undefined;
  }
}
