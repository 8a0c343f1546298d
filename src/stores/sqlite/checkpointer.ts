// Checkpoints of the WAL off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that takes the WAL
// past its threshold: it copies the WAL's pages into the database file and syncs both, on the event loop (some 15 %
// of a busy server's time went to it). Here a worker thread with a connection of its own runs PASSIVE checkpoints
// (never waiting for, nor blocking, a writer or a reader) soon after durable commits; the store's connection keeps a
// far higher automatic threshold, as a backstop in case this thread falls behind or fails.
//
// Durability does not change: a checkpoint copies only frames already committed, and with synchronous FULL on its
// connection it syncs the WAL before copying and the database file after, as the automatic one does. Processes
// sharing the file each checkpoint in their own way; SQLite lets only one checkpoint run at a time (the others are
// told busy, and PASSIVE gives up at once).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The automatic checkpoint threshold (WAL pages) of a connection whose WAL this thread checkpoints. */
export const BACKSTOP_AUTOCHECKPOINT = 10_000;
/** How soon after a commit a checkpoint starts (ms): commits in between share it. */
export const CHECKPOINT_DELAY_MS = 20;

export interface Checkpointer {
  /** After a commit: a checkpoint is started soon (one at a time). */
  committed(): void;
  /** Waits for the checkpoint in flight, then ends the thread and its connection. */
  close(): Promise<void>;
  /** Set once the thread failed; commits are then checkpointed by the connection itself again. */
  readonly failed: boolean;
}

/** One checkpoint's outcome, as PRAGMA wal_checkpoint answers it (or the error it threw). */
export interface CheckpointResult {
  busy?: number;
  log?: number;
  checkpointed?: number;
  error?: string;
}

// CommonJS evaluated in the thread: no file of ours to resolve, so it runs the same from dist/ and under a test runner.
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = FULL');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  let result;
  try {
    result = checkpoint.get();
  } catch (err) {
    result = { error: err instanceof Error ? err.message : String(err) };
  }
  parentPort.postMessage(result);
});
`;

/**
 * A checkpointer for the database file at `path`. `onFailure` runs once if the thread fails (it could not open the
 * file, or it died): the caller hands checkpoints back to its connection.
 */
export function createCheckpointer(
  path: string,
  onFailure: (err: unknown) => void,
  onCheckpoint?: (result: CheckpointResult) => void,
): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(THREAD, { eval: true, workerData: { path, driver } });
  // A process ending does not wait for it: a checkpoint cut short is safe (the next one does the work again).
  worker.unref();
  let timer: NodeJS.Timeout | undefined;
  let inFlight = false;
  let pending = false;
  let failed = false;
  let closing: Promise<void> | undefined;
  let idle: (() => void) | undefined;

  const start = (): void => {
    timer = undefined;
    if (failed || closing !== undefined) return;
    inFlight = true;
    pending = false;
    worker.postMessage('run');
  };
  const schedule = (): void => {
    if (timer !== undefined || inFlight || failed || closing !== undefined) return;
    timer = setTimeout(start, CHECKPOINT_DELAY_MS);
    timer.unref();
  };
  const fail = (err: unknown): void => {
    if (failed) return;
    failed = true;
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    inFlight = false;
    idle?.();
    onFailure(err);
  };

  worker.on('message', (result: CheckpointResult) => {
    inFlight = false;
    onCheckpoint?.(result);
    if (idle !== undefined) return idle();
    // Commits made while it ran: another checkpoint soon.
    if (pending) schedule();
  });
  worker.on('error', fail);
  worker.on('exit', (code) => {
    if (closing === undefined) fail(new Error(`checkpoint thread exited with code ${code}`));
  });

  return {
    committed() {
      pending = true;
      schedule();
    },
    get failed() {
      return failed;
    },
    close() {
      closing ??= (async () => {
        // Held open while it closes: a caller awaiting this close must not find the event loop empty (the thread's
        // reply and exit would never be seen, and the await would never settle).
        worker.ref();
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        if (inFlight && !failed) await new Promise<void>((resolve) => (idle = resolve));
        if (failed) {
          await worker.terminate();
          return;
        }
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        worker.postMessage('close');
        await exited;
      })();
      return closing;
    },
  };
}
