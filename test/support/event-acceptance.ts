// Events from outside a task across two servers on one store (a PostgreSQL schema, or a SQLite file): the task runs
// on one server, which waits for work only on changes (its poll a minute away), and the event is delivered to the
// other one; it resumes at once. Callback URLs of one server are taken by the other (the same secret); a repeat is the
// same 202, another payload 409, a forged token 404, an expired one 410; an early event is kept for its wait, and a
// wait that times out answers a typed value (these two wake by timers: a third server with the usual poll joins then).
import { expect } from 'vitest';
import { defineTool, textResult } from '../../src/index.js';
import { createDurableMcp, type DurableMcp } from '../../src/runtime.js';
import { createClient } from '../../src/client/index.js';
import { createCallbackTokens } from '../../src/tasks/callback-tokens.js';
import type { TaskStore } from '../../src/tasks/store.js';

const SECRET = 'the secret every replica shares';

const approve = defineTool({
  name: 'approve',
  task: { support: 'required' },
  inputSchema: {
    type: 'object',
    properties: { sleepMs: { type: 'number' }, timeoutMs: { type: 'number' } },
  },
  handler: async (args: { sleepMs?: number; timeoutMs?: number }, ctx) => {
    const url = await ctx.step('link', () => ctx.callbackUrl('approved'));
    if (args.sleepMs !== undefined) await ctx.sleep('before', args.sleepMs);
    const event = await ctx.waitForEvent('approved', {
      timeoutMs: args.timeoutMs ?? 60_000,
      schema: { type: 'object', required: ['by'] },
    });
    return textResult(JSON.stringify({ url, event }));
  },
});

interface Replica {
  mcp: DurableMcp;
  base: string;
}

async function replica(store: TaskStore, worker: boolean, pollMs = 60_000): Promise<Replica> {
  const mcp = createDurableMcp({
    toolSets: [{ tools: [approve] }],
    store,
    stateSecret: SECRET,
    publicUrl: 'http://127.0.0.1:1',
    // With the default pollMs, only a change wakes this worker promptly: its backstop poll is a minute away.
    worker: worker ? { pollMs } : false,
  });
  const running = await mcp.listen({ port: 0 });
  return { mcp, base: `http://127.0.0.1:${running.port}` };
}

const post = async (url: string, body: unknown) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
};

/** The task's text result once it completes (polling its status, at most `ms`). */
async function resultOf(replica: Replica, taskId: string, ms = 30_000): Promise<Record<string, unknown>> {
  const client = createClient({ url: `${replica.base}/mcp` });
  try {
    const until = Date.now() + ms;
    for (;;) {
      const task = await client.task(taskId).get();
      if (task.status === 'completed') {
        const [block] = (task.result as { content: { text: string }[] }).content;
        return JSON.parse(block?.text ?? 'null') as Record<string, unknown>;
      }
      if (Date.now() > until) throw new Error(`task ${taskId} is still ${String(task.status)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await client.close();
  }
}

async function start(replica: Replica, args: Record<string, unknown> = {}): Promise<string> {
  const client = createClient({ url: `${replica.base}/mcp` });
  try {
    const call = await client.callTool('approve', args);
    if (call.kind !== 'task') throw new Error('expected a task');
    return call.task.taskId;
  } finally {
    await client.close();
  }
}

/** Waits (at most 10 s) until the task says it waits for its event. */
async function waiting(replica: Replica, taskId: string): Promise<void> {
  const client = createClient({ url: `${replica.base}/mcp` });
  try {
    for (let i = 0; i < 200; i++) {
      const task = await client.task(taskId).get();
      if (String(task.statusMessage).startsWith('Waiting for event "approved"')) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`task ${taskId} never waited for its event`);
  } finally {
    await client.close();
  }
}

export async function expectEventsAcrossReplicas(runs: TaskStore, takes: TaskStore): Promise<void> {
  const a = await replica(runs, true);
  const b = await replica(takes, false);
  const closing: Replica[] = [a, b];
  try {
    // Created on B (no worker), run by A until it waits; delivered to B through A's callback URL, on B's address.
    const id = await start(b);
    await waiting(b, id);
    // Waiting, the task holds no worker.
    expect(a.mcp.worker?.active).toBe(0);
    // A callback URL signed by any replica with the shared secret (as the tool's own, checked below).
    const path = `/callbacks/${createCallbackTokens(SECRET).issue(id, 'approved', Date.now() + 60_000)}`;
    expect(await post(`${b.base}${path}`, { other: 1 })).toBe(422);
    const sent = Date.now();
    expect(await post(`${b.base}${path}`, { by: 'ada' })).toBe(202);
    const result = await resultOf(a, id);
    // Well before the worker's poll (a minute): the change woke it.
    expect(Date.now() - sent).toBeLessThan(15_000);
    expect(result.event).toEqual({ received: true, payload: { by: 'ada' } });
    const own = new URL(String(result.url)).pathname;
    expect(own).toMatch(/^\/callbacks\//);
    expect(await post(`${b.base}${own}`, { by: 'ada' })).toBe(202);
    expect(await post(`${a.base}${path}`, { by: 'ada' })).toBe(202);
    expect(await post(`${a.base}${path}`, { by: 'bob' })).toBe(409);
    const forged = createCallbackTokens('another secret').issue(id, 'approved', Date.now() + 60_000);
    expect(await post(`${b.base}/callbacks/${forged}`, { by: 'eve' })).toBe(404);
    const expired = createCallbackTokens(SECRET).issue(id, 'approved', Date.now() - 1);
    expect(await post(`${b.base}/callbacks/${expired}`, { by: 'eve' })).toBe(410);

    // The timed parts below wake by timers, not by a delivery: a third server with the usual poll joins as a backstop.
    const c = await replica(takes, true, 500);
    closing.push(c);

    // An early event: delivered by the owner (anonymous here) while the task sleeps, kept, then taken by its wait.
    const early = await start(b, { sleepMs: 1_500 });
    expect(await post(`${b.base}/tasks/${early}/events/approved`, { by: 'early' })).toBe(202);
    expect((await resultOf(a, early)).event).toEqual({ received: true, payload: { by: 'early' } });

    // A wait that times out answers a typed value; the event after it is refused.
    const late = await start(b, { timeoutMs: 300 });
    expect((await resultOf(a, late)).event).toEqual({ received: false, timedOut: true });
    expect(await post(`${b.base}/tasks/${late}/events/approved`, { by: 'late' })).toBe(410);
  } finally {
    for (const r of closing) await r.mcp.close(1_000);
  }
}
