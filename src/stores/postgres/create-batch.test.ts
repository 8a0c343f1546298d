// Group commit of creations: how many batches insert at once, and what the creations waiting meanwhile become.
import { describe, expect, it } from 'vitest';
import type { NewTask, TaskSnapshot } from '../../tasks/task.js';
import { newTask } from '../contract/harness.contract.js';
import { BATCHES_IN_FLIGHT, createBatcher, MAX_BATCH } from './create-batch.js';

/** A batcher whose inserts wait until released, recording each batch's size and the most inserting at once. */
function heldBatcher() {
  const batches: number[] = [];
  const waiting: (() => void)[] = [];
  let inserting = 0;
  let most = 0;
  const insert = async (tasks: NewTask[]): Promise<TaskSnapshot[]> => {
    batches.push(tasks.length);
    inserting += 1;
    most = Math.max(most, inserting);
    await new Promise<void>((resolve) => waiting.push(resolve));
    inserting -= 1;
    return tasks.map((t) => ({ id: t.id }) as TaskSnapshot);
  };
  const batcher = createBatcher<NewTask>(
    (task) => task,
    insert,
    () => Promise.reject(new Error('nothing is left out')),
  );
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  /** Lets every insert started so far end, and the batches they were holding back start. */
  const releaseAll = async () => {
    for (const release of waiting.splice(0)) release();
    await turn();
    await turn();
  };
  return { batcher, batches, waiting, turn, releaseAll, most: () => most };
}

describe('creation batches (PostgreSQL)', () => {
  it('inserts the creations of one turn together, and those that come while the slots are taken as one batch', async () => {
    const { batcher, batches, turn, releaseAll, most } = heldBatcher();
    const created: Promise<TaskSnapshot>[] = [];
    // BATCHES_IN_FLIGHT turns of creations take the slots; the turns after them queue.
    for (let t = 0; t < BATCHES_IN_FLIGHT + 3; t++) {
      for (let i = 0; i < 3; i++) created.push(batcher.add(newTask()));
      await turn();
    }
    expect(batches).toEqual(Array.from({ length: BATCHES_IN_FLIGHT }, () => 3));
    await releaseAll();
    // The three turns that waited leave as one batch.
    expect(batches.slice(BATCHES_IN_FLIGHT)).toEqual([9]);
    await releaseAll();
    const snapshots = await Promise.all(created);
    expect(snapshots).toHaveLength(3 * (BATCHES_IN_FLIGHT + 3));
    expect(most()).toBe(BATCHES_IN_FLIGHT);
  });

  it('splits a queue longer than a batch, and drain waits for every creation', async () => {
    const { batcher, batches, waiting, turn, most } = heldBatcher();
    const created = Array.from({ length: MAX_BATCH * 2 + 10 }, () => batcher.add(newTask()));
    await turn();
    await turn();
    expect(batches).toEqual([MAX_BATCH, MAX_BATCH]);
    let drained = false;
    const draining = batcher.drain().then(() => (drained = true));
    // Release inserts as they come until the drain ends.
    while (!drained) {
      for (const release of waiting.splice(0)) release();
      await turn();
    }
    await draining;
    expect(batches).toEqual([MAX_BATCH, MAX_BATCH, 10]);
    expect(await Promise.all(created)).toHaveLength(MAX_BATCH * 2 + 10);
    expect(most()).toBe(BATCHES_IN_FLIGHT);
  });
});
