// Durable commits of the SQLite store without an fsync on the event loop: commits write their WAL frames at
// synchronous=NORMAL (write(), no fsync), and this syncer makes them durable with fdatasync of the WAL file on
// libuv's thread pool, one sync at a time, each covering every commit made before it started (group commit).
//
// Why it is as durable as synchronous=FULL: in WAL mode FULL differs from NORMAL only by the sync of the WAL after
// each commit's frames (sqlite3WalFrames: WAL_SYNC_FLAGS are 0 at NORMAL; NORMAL still syncs a new WAL header, the
// WAL before a checkpoint and the database after it, with CKPT_SYNC_FLAGS). FULL pads the last frame to a sector
// first only where the file system lacks powersafe overwrite, which SQLite assumes on unix by default.
// fdatasync works on the file, not on the descriptor: ours flushes the frames SQLite wrote through its own. The WAL is
// appended in order and its frames are checksummed in a chain, so once a sync that started after a commit has
// finished, that commit and every one before it survive a power cut. The WAL file holds no locks (they are on the
// database file and -shm), so opening and closing a descriptor of it here cannot drop one of SQLite's POSIX locks;
// it is not deleted while the store's connection is open.
import { close, fdatasync, fsync, open } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { StoreUnavailableError } from '../../tasks/errors.js';

/** The file operations of the syncer; tests replace them (vi.spyOn) to hold or fail a sync. */
export const walFiles = {
  open: promisify(open),
  fdatasync: promisify(fdatasync),
  fsync: promisify(fsync),
  close: promisify(close),
};

export interface WalSync {
  /** Right after a commit that must be durable: resolves once a sync that started after it has finished. */
  committed(): Promise<void>;
  /**
   * While a sync is in flight: keeps `fn` to call when it has ended, just before the next sync starts (so that what
   * `fn` commits is covered by that one), and says true. Without a sync in flight: false (`fn` is not kept).
   */
  afterSync(fn: () => void): boolean;
  /** Resolves once every durable commit made so far has been synced; undefined when none waits. */
  settled(): Promise<void> | undefined;
  /** Set once a sync has failed: every durable write fails with it from then on (the WAL can no longer be trusted). */
  readonly failure: StoreUnavailableError | undefined;
  /** Waits for the commits made so far to be synced (or failed), then closes the WAL file. */
  close(): Promise<void>;
}

interface Waiter {
  seq: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The WAL file, opened on the first sync (its folder synced once, so that the file's name is durable too). */
async function openWal(walPath: string): Promise<number> {
  const fd = await walFiles.open(walPath, 'r+');
  if (process.platform !== 'win32') {
    const dir = await walFiles.open(dirname(walPath), 'r');
    try {
      await walFiles.fsync(dir);
    } finally {
      await walFiles.close(dir);
    }
  }
  return fd;
}

/** Without the cause attached: a failed sync is about the file, never about a write's rows (isDataError). */
const syncFailure = (err: unknown): StoreUnavailableError =>
  new StoreUnavailableError(`WAL sync failed: ${err instanceof Error ? err.message : String(err)}`);

export function createWalSync(walPath: string): WalSync {
  /** Durable commits so far, and how many of them a finished sync covers. */
  let commits = 0;
  let synced = 0;
  let waiters: Waiter[] = [];
  let inFlight: Promise<void> | undefined;
  let fd: number | undefined;
  let failure: StoreUnavailableError | undefined;
  const after: (() => void)[] = [];
  let holding = false;

  const fail = (err: unknown): void => {
    failure = syncFailure(err);
    for (const w of waiters.splice(0)) w.reject(failure);
  };

  const settle = (upTo: number): void => {
    synced = Math.max(synced, upTo);
    const done = waiters.findIndex((w) => w.seq > synced);
    // In commit order: their callers emit their changes in that order.
    for (const w of waiters.splice(0, done === -1 ? waiters.length : done)) w.resolve();
  };

  /** Starts a sync if commits wait for one and none is in flight; commits made meanwhile wait for the next. */
  const kick = (): void => {
    if (holding || inFlight !== undefined || failure !== undefined || waiters.length === 0) return;
    const upTo = commits;
    inFlight = (async () => {
      try {
        fd ??= await openWal(walPath);
        await walFiles.fdatasync(fd);
        settle(upTo);
      } catch (err) {
        fail(err);
      } finally {
        inFlight = undefined;
      }
      // What these commit is covered by the next sync, started once they all have.
      holding = true;
      try {
        for (const fn of after.splice(0)) fn();
      } finally {
        holding = false;
      }
      kick();
    })();
  };

  const waitFor = (seq: number): Promise<void> => {
    if (failure !== undefined) return Promise.reject(failure);
    return new Promise<void>((resolve, reject) => {
      waiters.push({ seq, resolve, reject });
      kick();
    });
  };

  const settled = (): Promise<void> | undefined =>
    failure === undefined && commits <= synced ? undefined : waitFor(commits);

  return {
    committed: () => waitFor(++commits),
    afterSync(fn) {
      if (inFlight === undefined) return false;
      after.push(fn);
      return true;
    },
    settled,
    get failure() {
      return failure;
    },
    async close() {
      await settled()?.catch(() => undefined);
      await inFlight;
      if (fd !== undefined) await walFiles.close(fd).catch(() => undefined);
      fd = undefined;
      waiters = [];
    },
  };
}
