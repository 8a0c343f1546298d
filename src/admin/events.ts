// The task events of the operator API: one subscription to the store's change feed per process, shared by every open
// stream. Each changed task is read once (however many streams are open, however many changes arrive while it is
// read), serialised once, and the same bytes handed to the streams whose operators' tenants hold it; a task outside a
// stream's tenants is never named.
import { inAdminScope, type AdminScope, type AdminTaskSummary, type TaskAdmin } from '../tasks/admin.js';
import type { ChangeFeed } from '../tasks/store.js';
import type { TaskInspection } from '../tasks/inspection.js';
import type { TaskEventJson } from './shapes.js';
import { errorSummary, summaryView } from './views.js';
import { sseFrame } from '../pacing/sse-writer.js';

/** What a stream sends for a task: its row as the list shows it, or that a task it showed is gone (purged). */
export type TaskEvent = TaskEventJson;

export interface EventListener {
  scope: AdminScope;
  /** A task within the scope changed: the event, and its SSE message (the same bytes for every stream). */
  send(event: TaskEvent, frame: Buffer): void;
  /** Changes may have gone unheard (the feed reconnected): what is shown must be read again. */
  resync(): void;
}

export interface TaskEventHub {
  /** Starts delivering to `listener`; the function returned stops it. */
  open(listener: EventListener): () => void;
}

export interface TaskEventHubOptions {
  changes: ChangeFeed;
  store: TaskAdmin;
  now: () => number;
  /** Told when a changed task could not be read (its event is dropped). */
  onError?: (err: unknown) => void;
}

const EVERY_TENANT: AdminScope = { tenants: 'all' };
/** How many ids of tasks it has shown a stream remembers, to say when one is purged. */
const SEEN_LIMIT = 10_000;

interface Stream {
  listener: EventListener;
  /** Ids of tasks this stream was sent, oldest first (a Set keeps insertion order). */
  seen: Set<string>;
}

export const toSummary = (task: TaskInspection): AdminTaskSummary => ({
  id: task.id,
  owner: task.owner,
  tool: task.tool,
  toolVersion: task.toolVersion,
  status: task.status,
  outcome: task.outcome,
  statusMessage: task.statusMessage,
  createdAt: task.createdAt,
  updatedAt: task.updatedAt,
  attempt: task.attempt,
  retryOf: task.retryOf,
  error: task.error === undefined ? undefined : errorSummary(task.error),
});

export function createTaskEventHub(options: TaskEventHubOptions): TaskEventHub {
  const streams = new Set<Stream>();
  /** Tasks being read, and those changed again meanwhile (read once more when the first read ends). */
  const reading = new Set<string>();
  const dirty = new Set<string>();
  let unsubscribe: (() => void) | undefined;

  const deliver = (taskId: string, task: TaskInspection | undefined): void => {
    const event: TaskEvent =
      task === undefined ? { taskId, removed: true } : { taskId, task: summaryView(toSummary(task)) };
    let frame: Buffer | undefined;
    for (const stream of streams) {
      // A change goes to the streams whose tenants hold the task; a purge to those that were shown it.
      const concerned =
        task === undefined
          ? stream.seen.delete(taskId)
          : inAdminScope(stream.listener.scope, task.owner.tenant);
      if (!concerned) continue;
      if (task !== undefined) remember(stream.seen, taskId);
      frame ??= Buffer.from(sseFrame({ data: JSON.stringify(event) }));
      stream.listener.send(event, frame);
    }
  };

  const read = (taskId: string): void => {
    reading.add(taskId);
    options.store
      .detail(EVERY_TENANT, taskId, options.now())
      .then(
        (task) => deliver(taskId, task),
        (err: unknown) => options.onError?.(err),
      )
      .finally(() => {
        reading.delete(taskId);
        if (dirty.delete(taskId) && streams.size > 0) read(taskId);
      });
  };

  const onChange = (taskId: string): void => {
    if (reading.has(taskId)) dirty.add(taskId);
    else read(taskId);
  };
  const onResync = (): void => {
    for (const stream of streams) stream.listener.resync();
  };

  return {
    open(listener) {
      const stream: Stream = { listener, seen: new Set() };
      streams.add(stream);
      unsubscribe ??= options.changes.subscribe((change) => onChange(change.taskId), onResync);
      return () => {
        if (!streams.delete(stream) || streams.size > 0) return;
        unsubscribe?.();
        unsubscribe = undefined;
      };
    },
  };
}

function remember(seen: Set<string>, taskId: string): void {
  seen.delete(taskId);
  seen.add(taskId);
  if (seen.size > SEEN_LIMIT) {
    const oldest = seen.values().next().value;
    if (oldest !== undefined) seen.delete(oldest);
  }
}
