// Finished tasks answered to their owner from memory (core/terminal-cache.ts), as long as the change feed hears
// every change: a terminal task changes again only when an operator purges it (or a TTL sweep removes it once
// expired, which the memory knows by itself), and a purge notifies. Nothing is remembered while LISTEN is not in
// effect, and everything is let go when it takes effect again (changes meanwhile went unheard).
import type { TaskOwner, TaskSnapshot } from '../../tasks/task.js';
import { isTerminal } from '../../tasks/task.js';
import { createTerminalCache } from '../core/terminal-cache.js';
import type { StoreChangeFeed } from './change-feed.js';

/** The changes heard last whose tasks are kept, to tell whether a read raced one of them. */
const RECENT = 1024;

export interface FinishedTasks {
  /** The owner's finished task as remembered (undefined: read it). */
  get(id: string, owner: TaskOwner, now: number): TaskSnapshot | undefined;
  /** Where the feed stands as a read begins: given back to `found` with what the read found. */
  mark(): number;
  /**
   * What a read begun at `mark` found: remembered when the task is finished, unless a change of it (or a gap in the
   * feed) was heard since the mark: the read may have seen the task before that change committed.
   */
  found(owner: TaskOwner, snapshot: TaskSnapshot, mark: number): void;
}

export function finishedTasks(feed: StoreChangeFeed): FinishedTasks {
  const cache = createTerminalCache();
  /** The tasks of the last RECENT changes heard, the change numbered n at n % RECENT. */
  const recent: (string | undefined)[] = new Array<string | undefined>(RECENT);
  /** Changes heard so far; a gap in the feed counts as more than RECENT, so no read begun before it counts. */
  let heard = 0;
  let subscribed = false;
  const subscribe = (): void => {
    subscribed = true;
    // Opens the LISTEN connection if nothing else has (only once a task is read).
    feed.changes.subscribe(
      (change) => {
        cache.forget(change.taskId);
        recent[heard % RECENT] = change.taskId;
        heard += 1;
      },
      () => {
        heard += RECENT + 1;
        cache.clear();
      },
    );
  };
  /** Whether a change of `id` (or a gap) was heard since `mark`. */
  const changedSince = (id: string, mark: number): boolean => {
    if (heard - mark > RECENT) return true;
    for (let n = mark; n < heard; n++) if (recent[n % RECENT] === id) return true;
    return false;
  };
  return {
    get(id, owner, now) {
      if (!feed.listening()) return undefined;
      return cache.get(id, owner, now);
    },
    mark() {
      if (!subscribed) subscribe();
      return heard;
    },
    found(owner, snapshot, mark) {
      if (!isTerminal(snapshot.status) || !feed.listening() || changedSince(snapshot.id, mark)) return;
      cache.remember(owner, snapshot);
    },
  };
}
