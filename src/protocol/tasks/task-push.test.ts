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
});
