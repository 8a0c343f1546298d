// A task followed by push while its server is cut off or restarted on the same store and port: the client reads the
// task at once, polls only while no stream is open, subscribes again, and gets the result by push.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client-entry.js';
import {
  createAnonymousAuthenticator,
  createDurableMcp,
  createHttpHandler,
  defineTool,
  listenHttp,
  LOOPBACK_HOSTS,
  textResult,
  type DurableMcp,
  type HttpHandler,
} from '../../src/index.js';
import { createSqliteTaskStore } from '../../src/advanced.js';

let release: () => void = () => undefined;
// Runs until the test releases it.
const gated = defineTool({
  name: 'gated',
  description: 'Finishes when the test says so',
  task: { support: 'required', pollIntervalMs: 100 },
  handler: async () => {
    await new Promise<void>((resolve) => (release = resolve));
    return textResult('gated done');
  },
});

/** The serving side (no worker) on one port; the tasks run in a worker-only runtime on the same SQLite file. */
interface Front {
  runtime: DurableMcp;
  handler: HttpHandler;
  running: Awaited<ReturnType<typeof listenHttp>>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  release();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startFront(path: string, port: number): Promise<Front> {
  const runtime = createDurableMcp({
    toolSets: [{ tools: [gated] }],
    store: createSqliteTaskStore({ path }),
    tasks: { tasksGetRate: false, defaultPollIntervalMs: 100 },
    worker: false,
  });
  const handler = createHttpHandler({
    server: runtime.server,
    authenticator: createAnonymousAuthenticator(),
    origin: { allowedHosts: LOOPBACK_HOSTS },
  });
  return { runtime, handler, running: await listenHttp(handler, '127.0.0.1', port) };
}

async function setUp(): Promise<{ path: string; front: () => Front; setFront: (f: Front) => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'durable-mcp-resubscribe-'));
  const path = join(dir, 'tasks.db');
  let front = await startFront(path, 0);
  const worker = createDurableMcp({
    toolSets: [{ tools: [gated] }],
    store: createSqliteTaskStore({ path }),
    worker: { pollMs: 50 },
  });
  cleanups.push(async () => {
    await front.running.close(300);
    await front.runtime.close(500);
    await worker.close(500);
    rmSync(dir, { recursive: true, force: true });
  });
  return { path, front: () => front, setFront: (f) => void (front = f) };
}

/** A fetch that logs every request's method and counts the acknowledgements that pass on listen streams. */
function recordingFetch() {
  const methods: string[] = [];
  let acks = 0;
  const recording: typeof fetch = async (input, init) => {
    const method = (JSON.parse(String(init?.body)) as { method: string }).method;
    methods.push(method);
    const res = await fetch(input, init);
    if (method !== 'subscriptions/listen' || res.body === null) return res;
    const decoder = new TextDecoder();
    let text = '';
    let acked = false;
    const body = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          text += decoder.decode(chunk, { stream: true });
          if (!acked && text.includes('notifications/subscriptions/acknowledged')) {
            acked = true;
            acks++;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: res.status, headers: res.headers });
  };
  const count = (m: string): number => methods.filter((x) => x === m).length;
  return { fetch: recording, count, acks: () => acks };
}

describe.each([
  {
    end: 'a cut of every connection (the listener closed and opened again)',
    async restart(s: Awaited<ReturnType<typeof setUp>>): Promise<void> {
      const { running, handler } = s.front();
      await running.close(0);
      s.setFront({ ...s.front(), running: await listenHttp(handler, '127.0.0.1', running.port) });
    },
  },
  {
    end: 'a graceful restart of the server on the same store and port',
    async restart(s: Awaited<ReturnType<typeof setUp>>): Promise<void> {
      const { running, runtime } = s.front();
      const closing = running.close(2_000);
      await runtime.close(200);
      await closing;
      s.setFront(await startFront(s.path, running.port));
    },
  },
])('a followed task survives $end', ({ restart }) => {
  it('subscribes again, stops polling, and gets the result by push', async () => {
    const s = await setUp();
    const rec = recordingFetch();
    const client = createClient({ url: s.front().running.url, fetch: rec.fetch });
    const call = await client.callTool('gated', {});
    if (call.kind !== 'task') throw new Error('expected a task');
    const statuses: string[] = [];
    const following = call.task.result({ onUpdate: (t) => statuses.push(String(t.status)) });
    await vi.waitFor(() => expect(rec.acks()).toBe(1), { timeout: 15_000, interval: 20 });
    expect(rec.count('tasks/get')).toBe(0);

    await restart(s);
    await vi.waitFor(() => expect(rec.acks()).toBe(2), { timeout: 30_000, interval: 20 });
    // The task was read as soon as the first stream ended.
    const gets = rec.count('tasks/get');
    expect(gets).toBeGreaterThanOrEqual(1);
    // With a stream open again, no more polls (the server asks for one every 100 ms).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(rec.count('tasks/get')).toBe(gets);

    release();
    const outcome = await following;
    expect(outcome).toMatchObject({ status: 'completed', result: { content: [{ text: 'gated done' }] } });
    // The result came on the second stream, not from a poll.
    expect(rec.count('tasks/get')).toBe(gets);
    expect(rec.count('subscriptions/listen')).toBe(2);
    expect(statuses.at(-1)).toBe('completed');
  }, 60_000);
});
