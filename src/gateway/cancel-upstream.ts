// Telling the upstream of a cancel that no run hears. A gateway task cancelled while it runs stops its run, which
// cancels the upstream task it follows (follow.ts). One cancelled while no run holds it (it waits for its caller's
// input, or for a retry) ends `cancelled` at once: the store's change feed tells every gateway process, one of them
// (a one-time key) reads the task's latest recorded answer and, when it is a task of the upstream's, sends the
// upstream its tasks/cancel. Best effort, as a run's is: a process that stops first leaves the upstream task to its TTL.
import type { TaskStore } from '../tasks/store.js';
import type { AdminScope } from '../tasks/admin.js';
import { latestRound, upstreamTaskOf } from './dispatch-state.js';
import { errorMessage, type Upstream, type UpstreamTaskCreated } from './upstream.js';

const EVERY_TENANT: AdminScope = { tenants: 'all' };

/** How long the one-time key that makes one process send the cancel is kept. */
const ONCE_MS = 24 * 60 * 60 * 1000;

/** Cancels handled at once, at most (others wait their turn). */
const MAX_AT_ONCE = 4;

/** Cancels waiting to be handled, at most (past that, the oldest are dropped: those upstream tasks end by their TTL). */
const MAX_QUEUED = 1_000;

export interface CancelNotifierParts {
  store: TaskStore;
  upstream: Upstream;
  /** Whether a tool is the upstream's (the gateway's own tools have no upstream task). */
  isUpstreamTool: (tool: string) => boolean;
  log: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}

/** Sends the upstream task's cancel for the gateway task `id`, if it is one that ended cancelled while not running. */
async function tell(parts: CancelNotifierParts, id: string): Promise<void> {
  const { store, upstream } = parts;
  const now = (parts.now ?? Date.now)();
  const task = await store.inspect?.(id, now);
  if (task === undefined || task.status !== 'cancelled' || !parts.isUpstreamTool(task.tool)) return;
  const round = latestRound(task.steps);
  if (round === undefined || !round.answered) return;
  const answer = await store.admin?.stepValue?.(EVERY_TENANT, id, round.answer, now);
  const upstreamTaskId = upstreamTaskOf(answer);
  if (upstreamTaskId === undefined || upstream.cancelTask === undefined) return;
  if (!(await store.consumeOnce(`gateway-cancel:${id}`, now + ONCE_MS))) return;
  try {
    await upstream.cancelTask(upstreamTaskId, task.owner, answer as unknown as UpstreamTaskCreated);
    parts.log('info', 'gateway: the upstream task of a cancelled task was cancelled', {
      taskId: id,
      upstreamTaskId,
    });
  } catch (err) {
    parts.log('warn', 'gateway: the upstream task of a cancelled task could not be cancelled', {
      taskId: id,
      upstreamTaskId,
      error: errorMessage(err),
    });
  }
}

/**
 * Listens for cancels on the store's change feed and tells the upstream of those no run hears (see above). A store
 * without a change feed, inspection or the operators' step reads does nothing. Returns the stopper.
 */
export function tellUpstreamOfCancels(parts: CancelNotifierParts): () => void {
  const { store } = parts;
  if (store.changes === undefined || store.inspect === undefined || store.admin?.stepValue === undefined)
    return () => undefined;
  const queued: string[] = [];
  let active = 0;
  let stopped = false;
  const next = (): void => {
    while (!stopped && active < MAX_AT_ONCE && queued.length > 0) {
      const id = queued.shift() as string;
      active++;
      tell(parts, id)
        .catch((err: unknown) =>
          parts.log('warn', 'gateway: cannot read a cancelled task', {
            taskId: id,
            error: errorMessage(err),
          }),
        )
        .finally(() => {
          active--;
          next();
        });
    }
  };
  const unsubscribe = store.changes.subscribe((change) => {
    if (!change.cancelRequested || change.taskId === '*') return;
    if (queued.length >= MAX_QUEUED) queued.shift();
    queued.push(change.taskId);
    next();
  });
  return () => {
    stopped = true;
    queued.length = 0;
    unsubscribe();
  };
}
