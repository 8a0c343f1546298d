// The TaskStore contract: streams of partial results (TaskStreamsPort). Chunks are appended at the next offset of
// their stream under the run's lease, an append of a key the stream holds writes nothing and answers its offset (a
// replay), the task's bound holds over all its streams, reads page from an offset, and chunks go with their task.
import { beforeEach, describe, expect, it } from 'vitest';
import type { StreamBounds, TaskStore, TaskStreamsPort } from '../../tasks/store.js';
import type { ClaimedTask } from '../../tasks/task.js';
import { LEASE, must, newTask, type ContractStore } from './harness.contract.js';

const ROOMY: StreamBounds = { maxChunks: 100, maxBytes: 10_000 };

export function streamsContract(h: ContractStore): void {
  describe('streams', () => {
    const port = (): TaskStreamsPort => must(h.store.streams, 'streams port');
    // An optional capability: a store without it is not tested here.
    beforeEach((ctx) => {
      if (h.store.streams === undefined) ctx.skip();
    });
    const append = (run: ClaimedTask, stream: string, key: string, data: string, bounds = ROOMY) =>
      port().append(run.id, run.token, stream, key, data, h.t, bounds);

    it('appends at the next offset of each stream and reads from any offset', async () => {
      const run = await h.running();
      expect(await append(run, 'out', 'a', 'Hello')).toEqual({ kind: 'appended', seq: 0 });
      expect(await append(run, 'out', 'b', ', wörld')).toEqual({ kind: 'appended', seq: 1 });
      expect(await append(run, 'log', 'a', 'first')).toEqual({ kind: 'appended', seq: 0 });
      expect(await append(run, 'out', 'c', '!')).toEqual({ kind: 'appended', seq: 2 });
      const all = await port().read(run.id, 'out', 0, 100, 1_000);
      expect(all.length).toBe(3);
      expect(all.chunks.map((c) => [c.seq, c.data, c.at])).toEqual([
        [0, 'Hello', h.t],
        [1, ', wörld', h.t],
        [2, '!', h.t],
      ]);
      expect((await port().read(run.id, 'out', 1, 100, 1_000)).chunks.map((c) => c.data)).toEqual([
        ', wörld',
        '!',
      ]);
      expect(await port().read(run.id, 'out', 3, 100, 1_000)).toEqual({ chunks: [], length: 3 });
      expect(await port().read(run.id, 'none', 0, 100, 1_000)).toEqual({ chunks: [], length: 0 });
      // Pages bounded by count, and by bytes (the first chunk always comes, whatever its size).
      expect((await port().read(run.id, 'out', 0, 2, 1_000)).chunks.map((c) => c.seq)).toEqual([0, 1]);
      expect((await port().read(run.id, 'out', 0, 100, 6)).chunks.map((c) => c.seq)).toEqual([0]);
      expect((await port().read(run.id, 'out', 1, 100, 1)).chunks.map((c) => c.seq)).toEqual([1]);
    });

    it('answers the offset a key has without writing again: a replay does not repeat chunks', async () => {
      const run = await h.running();
      await append(run, 'out', 'k0', 'one');
      await append(run, 'out', 'k1', 'two');
      // The run is taken over after its lease lapsed; the replay appends its chunks again.
      h.t += LEASE + 1;
      const replay = await h.claim('w2');
      expect(replay.id).toBe(run.id);
      expect(await append(replay, 'out', 'k0', 'one')).toEqual({ kind: 'appended', seq: 0 });
      expect(await append(replay, 'out', 'k1', 'two (again)')).toEqual({ kind: 'appended', seq: 1 });
      expect(await append(replay, 'out', 'k2', 'three')).toEqual({ kind: 'appended', seq: 2 });
      const page = await port().read(run.id, 'out', 0, 100, 1_000);
      expect(page.chunks.map((c) => c.data)).toEqual(['one', 'two', 'three']);
    });

    it('writes nothing for a run that lost its lease, or once the task ended', async () => {
      const run = await h.running();
      expect(await append({ ...run, token: run.token + 1 }, 'out', 'a', 'x')).toEqual({ kind: 'lost' });
      await h.store.finish(run.id, run.token, { kind: 'completed', result: {} }, h.t);
      expect(await append(run, 'out', 'a', 'x')).toEqual({ kind: 'lost' });
      expect((await port().read(run.id, 'out', 0, 100, 1_000)).length).toBe(0);
    });

    it('refuses a chunk past the task’s bounds, over all its streams, and writes nothing', async () => {
      const run = await h.running();
      const bounds = { maxChunks: 3, maxBytes: 10 };
      expect((await append(run, 'a', '1', '12345', bounds)).kind).toBe('appended');
      expect(await append(run, 'b', '1', '123456', bounds)).toEqual({ kind: 'full', bound: 'bytes' });
      expect((await append(run, 'b', '2', '12345', bounds)).kind).toBe('appended');
      // A replayed key is answered even when the task is full.
      expect(await append(run, 'a', '1', '12345', bounds)).toEqual({ kind: 'appended', seq: 0 });
      expect(await append(run, 'a', '3', '', bounds)).toEqual({ kind: 'appended', seq: 1 });
      expect(await append(run, 'a', '4', '', bounds)).toEqual({ kind: 'full', bound: 'chunks' });
      expect((await port().read(run.id, 'a', 0, 100, 1_000)).length).toBe(2);
      expect((await port().read(run.id, 'b', 0, 100, 1_000)).length).toBe(1);
    });

    it('deletes the chunks with their task', async () => {
      const run = await h.running({ ttlMs: 1_000 });
      await append(run, 'out', 'a', 'kept until the purge');
      await h.store.finish(run.id, run.token, { kind: 'completed', result: {} }, h.t);
      expect(await h.store.purge(h.t + 1_000 + 2, 1)).toBe(1);
      expect(await port().read(run.id, 'out', 0, 100, 1_000)).toEqual({ chunks: [], length: 0 });
    });
  });
}

/** After an upgrade to the schema with streams: a task created after appends to a stream and reads it back. */
export async function expectStreamsAfterUpgrade(store: TaskStore, now: number): Promise<void> {
  const port = must(store.streams, 'streams port');
  const task = await store.create(newTask({ createdAt: now }));
  let run: ClaimedTask | undefined;
  for (let i = 0; i < 50 && run?.id !== task.id; i++) run = await store.claim('w', LEASE, now);
  const claimed = must(run?.id === task.id ? run : undefined, 'claim of the new task');
  expect(await port.append(task.id, claimed.token, 'out', 'k', 'after', now, ROOMY)).toEqual({
    kind: 'appended',
    seq: 0,
  });
  expect((await port.read(task.id, 'out', 0, 10, 1_000)).chunks.map((c) => c.data)).toEqual(['after']);
}
