// The taskIds subscription: which snapshot each change is pushed with, and that none goes out of commit order.
import { describe, expect, it } from 'vitest';
import { newTaskId } from '../../tasks/ids.js';
import type { CommittedTask, TaskChange, TaskStore } from '../../tasks/store.js';
import type { LookupMiss, TaskSnapshot } from '../../tasks/task.js';
import type { RequestScope } from '../scope.js';
import { createTaskSubscriptions } from './subscription.js';
import { drivenChangeFeed } from '../../../test/support/change-feed.js';

const NOW = 1_700_000_000_000;
const ID = newTaskId();

const snapshot = (
  revision: number | undefined,
  status: TaskSnapshot['status'] = 'working',
): TaskSnapshot => ({
  id: ID,
  status,
  statusMessage: `revision ${revision}`,
  createdAt: NOW,
  updatedAt: NOW,
  ttlMs: 60_000,
  pollIntervalMs: undefined,
  inputRequests: {},
  result: undefined,
  error: undefined,
  ...(revision === undefined ? {} : { revision }),
});

/** A store whose reads the test answers one by one, and whose change feed the test drives. */
function fakeStore() {
  const feed = drivenChangeFeed();
  const reads: { resolve: (s: TaskSnapshot | LookupMiss) => void; reject: (err: Error) => void }[] = [];
  let current: TaskSnapshot | LookupMiss = snapshot(1);
  const store = {
    get: () =>
      new Promise<TaskSnapshot | LookupMiss>((resolve, reject) => {
        reads.push({ resolve, reject });
      }),
    changes: feed.changes,
  } as unknown as TaskStore;
  return {
    store,
    reads,
    set current(s: TaskSnapshot | LookupMiss) {
      current = s;
    },
    /** Answers the oldest pending read with the state at the time of the call (or `answer`). */
    answerRead(answer: TaskSnapshot | LookupMiss = current) {
      const read = reads.shift();
      if (read === undefined) throw new Error('no read pending');
      read.resolve(answer);
    },
    failRead() {
      reads.shift()?.reject(new Error('store unavailable'));
    },
    /** The feed began hearing other processes again: changes before may have gone unheard. */
    resync: feed.resync,
    emit(change: Partial<TaskChange> = {}) {
      feed.emit({ taskId: ID, runnable: false, cancelRequested: false, ...change });
    },
  };
}

/** A change's committed task, as a store that numbers its snapshots carries it. */
const carry = (s: TaskSnapshot, expiresAt: number | null): CommittedTask => ({
  revision: s.revision ?? 0,
  expiresAt,
  snapshot: () => s,
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

async function subscribe(store: TaskStore, now = () => NOW) {
  const sent: string[] = [];
  const scope = {
    id: 'sub',
    envelope: { clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    auth: { tenant: 'acme', principal: 'alice' },
    whenWritable: () => Promise.resolve(),
  } as unknown as RequestScope;
  const ext = createTaskSubscriptions(store, now);
  const accepting = ext.accept([ID], scope, (_method, params) => sent.push(String(params.statusMessage)));
  return { accepting, sent };
}

/** Subscribes and lets the first snapshot (revision 1, read) go out. */
async function subscribed(fake: ReturnType<typeof fakeStore>, now?: () => number) {
  const { accepting, sent } = await subscribe(fake.store, now);
  await settle();
  fake.answerRead(); // accept's ownership check
  const sub = await accepting;
  if (sub === undefined) throw new Error('not accepted');
  sub.start();
  await settle();
  fake.answerRead(); // the first snapshot
  await settle();
  expect(sent).toEqual(['revision 1']);
  return { sub, sent };
}

describe('taskIds subscription', () => {
  it('pushes a change that carries its committed snapshot without reading the store', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    fake.emit({ committed: carry(snapshot(2), NOW + 60_000) });
    await settle();
    expect(fake.reads).toHaveLength(0);
    expect(sent).toEqual(['revision 1', 'revision 2']);
  });

  it('reads every watched task again on a resync, so a change the feed did not hear still goes out', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    fake.current = snapshot(2); // committed while the feed was not listening: no change arrives
    fake.resync();
    await settle();
    expect(fake.reads).toHaveLength(1);
    fake.answerRead();
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2']);
  });

  it('reads the store for a change without a snapshot, and for a carried one that has expired', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    fake.current = snapshot(2);
    fake.emit();
    await settle();
    expect(fake.reads).toHaveLength(1);
    fake.answerRead();
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2']);

    fake.emit({ committed: carry(snapshot(3), NOW) });
    await settle();
    expect(fake.reads).toHaveLength(1);
    fake.answerRead('expired');
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2']);
    // Expired: the task is no longer watched.
    fake.emit({ committed: carry(snapshot(4), null) });
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2']);
  });

  it('never pushes a carried snapshot older than one a read already sent', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    // Another process's change (revision 3) is heard before this process's own earlier commit (revision 2).
    fake.emit();
    await settle();
    fake.emit({ committed: carry(snapshot(2), null) });
    fake.answerRead(snapshot(3));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 3']);
    expect(fake.reads).toHaveLength(0);
  });

  it('prefers a carried snapshot to a read that set out before its commit', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    fake.emit(); // read of revision 2 under way
    await settle();
    fake.emit({ committed: carry(snapshot(3), null) });
    fake.emit(); // and another change to read after it
    fake.answerRead(snapshot(2));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2']);
    // The next round needs a read (the last change carried nothing); it answers from before revision 3's commit.
    fake.answerRead(snapshot(2));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2', 'revision 3']);
  });

  it('keeps the newest of several carried snapshots while one is in flight', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    fake.emit(); // a read is in flight: the carried ones wait
    await settle();
    fake.emit({ committed: carry(snapshot(4, 'completed'), null) });
    fake.emit({ committed: carry(snapshot(3), null) });
    fake.answerRead(snapshot(2));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2', 'revision 4']);
  });

  it('falls back to the carried snapshot when the read it needed fails, and drops nothing else', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    fake.emit({ committed: carry(snapshot(2), null) });
    fake.emit(); // arrives before the push of revision 2 has started: a read is needed
    await settle();
    fake.failRead();
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2']);
    // Without a carried snapshot a failed read sends nothing; the next change reads again.
    fake.emit();
    await settle();
    fake.failRead();
    await settle();
    fake.emit();
    await settle();
    fake.answerRead(snapshot(3));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2', 'revision 3']);
  });

  it('orders by what it can when a writer does not bump the revision (a replica not yet upgraded)', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    const later = (revision: number) => ({ ...snapshot(revision), statusMessage: `after ${revision}` });
    // This process commits revision 2; another writer then changes the task without bumping it.
    fake.emit({ committed: carry(snapshot(2), null) });
    await settle();
    fake.emit();
    await settle();
    fake.answerRead(later(2));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2', 'after 2']);
    // The other way round: the read of the later state goes out before this process's own change arrives.
    fake.emit();
    await settle();
    fake.emit({ committed: carry(snapshot(3), null) });
    fake.answerRead(later(3));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2', 'after 2', 'after 3']);
  });

  it('reads the store when a carried snapshot cannot be decoded', async () => {
    const fake = fakeStore();
    const { sent } = await subscribed(fake);
    fake.emit({ committed: { revision: 2, expiresAt: null, snapshot: () => undefined } });
    await settle();
    expect(fake.reads).toHaveLength(1);
    fake.answerRead(snapshot(2));
    await settle();
    expect(sent).toEqual(['revision 1', 'revision 2']);
  });

  it('pushes every read where the store does not number its snapshots', async () => {
    const fake = fakeStore();
    fake.current = snapshot(undefined);
    const { accepting, sent } = await subscribe(fake.store);
    await settle();
    fake.answerRead();
    (await accepting)?.start();
    await settle();
    fake.answerRead(snapshot(undefined));
    fake.emit();
    await settle();
    fake.answerRead({ ...snapshot(undefined), statusMessage: 'later' });
    await settle();
    expect(sent).toEqual(['revision undefined', 'later']);
  });
});
