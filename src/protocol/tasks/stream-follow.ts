// Updates of task streams for subscriptions/listen: each followed stream's length is looked at every pollMs (a run
// on any replica appends to it), and `notifications/resources/updated` sent when it grew; once its task ended, one
// last update tells the follower to read the end, and the stream is no longer looked at.
import type { TaskStore } from '../../tasks/store.js';
import { isTerminal, type TaskOwner } from '../../tasks/task.js';
import { parseStreamUri, type StreamAddress } from '../../wire/stream-uri.js';

/** How often the followed streams are looked at. */
export const STREAM_POLL_MS = 500;
/** Streams one subscription may follow (the others are left out of its acknowledgement). */
export const MAX_FOLLOWED_STREAMS = 100;

interface Followed {
  address: StreamAddress;
  length: number;
  /** Its task changed since its status was last looked at (always, without a change feed). */
  dirty: boolean;
}

export async function followStreams(
  store: TaskStore,
  now: () => number,
  uris: readonly string[],
  owner: TaskOwner,
  send: (uri: string) => void,
  pollMs = STREAM_POLL_MS,
): Promise<{ agreed: string[]; start(): void; stop(): void }> {
  const streams = store.streams;
  const followed = new Map<string, Followed>();
  for (const uri of new Set(uris)) {
    if (streams === undefined || followed.size >= MAX_FOLLOWED_STREAMS) break;
    const address = parseStreamUri(uri);
    // The stream's own URI only (not one with an offset); a task not the caller's is left out without a word.
    if (address?.uri !== uri) continue;
    const task = await store.get(address.taskId, owner, now());
    if (typeof task === 'string') continue;
    const { length } = await streams.read(address.taskId, address.name, 0, 0, 0);
    if (!isTerminal(task.status)) followed.set(uri, { address, length, dirty: true });
    else followed.set(uri, { address, length, dirty: false });
  }
  const agreed = [...followed.keys()];
  for (const [uri, f] of followed) if (!f.dirty) followed.delete(uri); // ended already: nothing will come
  let timer: ReturnType<typeof setInterval> | undefined;
  let unsubscribe: (() => void) | undefined;
  let busy = false;
  const look = async (): Promise<void> => {
    for (const [uri, f] of [...followed]) {
      const { taskId, name } = f.address;
      // Looked at before the length: once the task has ended, the length read after is the stream's last.
      let ended = false;
      if (f.dirty || store.changes === undefined) {
        f.dirty = false;
        const task = await store.get(taskId, owner, now());
        ended = typeof task === 'string' || isTerminal(task.status);
      }
      const { length } = await (streams as NonNullable<typeof streams>).read(taskId, name, 0, 0, 0);
      const grew = length > f.length;
      f.length = length;
      if (ended) followed.delete(uri);
      if (grew || ended) send(uri);
    }
  };
  return {
    agreed,
    start() {
      if (followed.size === 0) return;
      unsubscribe = store.changes?.subscribe(
        (change) => {
          for (const f of followed.values()) if (f.address.taskId === change.taskId) f.dirty = true;
        },
        () => {
          for (const f of followed.values()) f.dirty = true;
        },
      );
      timer = setInterval(() => {
        if (busy) return;
        busy = true;
        look()
          .catch(() => undefined) // the store away: the next look tries again
          .finally(() => (busy = false));
      }, pollMs);
      timer.unref?.();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      unsubscribe?.();
      followed.clear();
    },
  };
}
