// The pushes of one subscription: a task's state is dropped between pushes, its last revision is not.
import { describe, expect, it } from 'vitest';
import type { CommittedTask, TaskChange } from '../../tasks/store.js';
import type { TaskSnapshot } from '../../tasks/task.js';
import type { JsonObject } from '../types.js';
import { createTaskPusher } from './task-push.js';

const snapshot = (id: string, revision: number): TaskSnapshot => ({
  id,
  status: 'working',
  statusMessage: `revision ${revision}`,
  createdAt: 0,
  updatedAt: revision,
  ttlMs: null,
  pollIntervalMs: undefined,
  inputRequests: {},
  result: undefined,
  error: undefined,
  revision,
});

const change = (taskId: string, committed?: TaskSnapshot): TaskChange => ({
  taskId,
  runnable: false,
  cancelRequested: false,
  committed:
    committed === undefined
      ? undefined
      : ({ revision: committed.revision, expiresAt: null, snapshot: () => committed } as CommittedTask),
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('createTaskPusher', () => {
  it('never sends a state older than, or carried at, the revision already sent, after its state was dropped', async () => {
    let stored = snapshot('task_a', 2);
    const sent: JsonObject[] = [];
    const pusher = createTaskPusher(['task_a'], {
      read: () => Promise.resolve(stored),
      forget: () => undefined,
      now: () => 0,
      whenWritable: () => Promise.resolve(),
      send: (_method, params) => void sent.push(params),
    });
    pusher.pushAll();
    await settle();
    expect(sent.map((p) => p.statusMessage)).toEqual(['revision 2']);
    pusher.changed(change('task_a', snapshot('task_a', 1)));
    await settle();
    pusher.changed(change('task_a', snapshot('task_a', 2)));
    await settle();
    expect(sent).toHaveLength(1);
    stored = snapshot('task_a', 3);
    pusher.changed(change('task_a'));
    await settle();
    pusher.changed(change('other_task', snapshot('other_task', 9)));
    await settle();
    expect(sent.map((p) => p.statusMessage)).toEqual(['revision 2', 'revision 3']);
    pusher.stop();
  });

  it('stops watching a task that expired', async () => {
    const sent: JsonObject[] = [];
    const reads: string[] = [];
    const pusher = createTaskPusher(['task_gone'], {
      read: (id) => (reads.push(id), Promise.resolve('expired' as const)),
      forget: () => undefined,
      now: () => 0,
      whenWritable: () => Promise.resolve(),
      send: (_method, params) => void sent.push(params),
    });
    pusher.pushAll();
    await settle();
    pusher.changed(change('task_gone'));
    pusher.resync();
    await settle();
    expect(reads).toEqual(['task_gone']);
    expect(sent).toEqual([]);
  });

  // A few watched tasks are kept in one array, many in a map: both keep the same revisions and forget the same tasks.
  it.each([3, 40])(
    'keeps the last revision of each of %i watched tasks, and forgets one that expired',
    async (n) => {
      const ids = Array.from({ length: n }, (_, i) => `task_${i}`);
      const stored = new Map(ids.map((id) => [id, snapshot(id, 1)] as const));
      const expired = new Set<string>();
      const sent: Array<[string, unknown]> = [];
      const reads: string[] = [];
      const pusher = createTaskPusher(ids, {
        read: (id) => {
          reads.push(id);
          return Promise.resolve(expired.has(id) ? ('expired' as const) : stored.get(id)!);
        },
        forget: () => undefined,
        now: () => 0,
        whenWritable: () => Promise.resolve(),
        send: (_method, params) => void sent.push([params.taskId as string, params.statusMessage]),
      });
      pusher.pushAll();
      await settle();
      expect(sent).toHaveLength(n);
      sent.length = 0;
      const [first, middle, last] = [ids[0]!, ids[Math.floor(n / 2)]!, ids[n - 1]!];
      // An older state of a watched task is never sent; a newer one is; an unwatched task is not read.
      pusher.changed(change(last, snapshot(last, 0)));
      pusher.changed(change(first, snapshot(first, 2)));
      pusher.changed(change('task_unwatched'));
      await settle();
      expect(sent).toEqual([[first, 'revision 2']]);
      // The middle task expires: it is no longer watched, the tasks around it still are, with their revisions.
      expired.add(middle);
      pusher.changed(change(middle));
      await settle();
      reads.length = 0;
      pusher.changed(change(middle));
      pusher.changed(change(first, snapshot(first, 2)));
      pusher.changed(change(last, snapshot(last, 3)));
      await settle();
      expect(reads).toEqual([]);
      expect(sent).toEqual([
        [first, 'revision 2'],
        [last, 'revision 3'],
      ]);
      pusher.resync();
      await settle();
      expect(reads).toHaveLength(n - 1);
      expect(reads).not.toContain(middle);
      pusher.stop();
    },
  );
});
