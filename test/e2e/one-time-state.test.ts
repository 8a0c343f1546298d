// One-time requestState over HTTP: a round of tools/call that acted (ran the confirmed handler, created a task)
// cannot be presented again; an idempotent retry of the creating round still joins its task.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import {
  callTool,
  IDEMPOTENCY_KEY,
  oneTimeTools,
  taskCount,
  TASKS_EXT,
  yes,
  type OneTimeTools,
} from '../support/one-time-tools.js';

const SYNC = { elicitation: {} };
const WITH_TASKS = { elicitation: {}, extensions: { [TASKS_EXT]: {} } };
const USED = { code: -32602, message: 'Invalid params: requestState rejected (already used)' };

let server: DurableTestServer;
let tools: OneTimeTools;

beforeAll(async () => {
  tools = oneTimeTools();
  server = await startDurableServer({ toolSets: [tools.toolSet] });
});

afterAll(() => server.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(probe: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 8_000;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The requestState of the first round of a call. */
async function firstRound(
  params: Record<string, unknown>,
  caps: Record<string, unknown>,
  meta?: Record<string, unknown>,
) {
  const round = await callTool(server.url, params, caps, meta);
  expect(round.result.resultType).toBe('input_required');
  return String(round.result.requestState);
}

describe('a synchronous tool', () => {
  const call = { name: 'transfer', arguments: { amount: 10 } };

  it('runs a confirmed round once: the same requestState again is refused like an expired one', async () => {
    const before = tools.counts.transfers;
    const requestState = await firstRound(call, SYNC);
    const confirmed = { ...call, inputResponses: { confirm: yes }, requestState };
    const done = await callTool(server.url, confirmed, SYNC);
    expect(done.result.resultType).toBe('complete');
    expect(tools.counts.transfers).toBe(before + 1);
    for (let i = 0; i < 2; i++) {
      const again = await callTool(server.url, confirmed, SYNC);
      expect(again.error).toEqual(USED);
    }
    expect(tools.counts.transfers).toBe(before + 1);
  });

  it('lets one of concurrent presentations of a state run; the others are refused', async () => {
    const before = tools.counts.transfers;
    const requestState = await firstRound(call, SYNC);
    const confirmed = { ...call, inputResponses: { confirm: yes }, requestState };
    const replies = await Promise.all(Array.from({ length: 6 }, () => callTool(server.url, confirmed, SYNC)));
    expect(replies.filter((r) => r.result.resultType === 'complete')).toHaveLength(1);
    expect(replies.filter((r) => r.error?.message === USED.message)).toHaveLength(5);
    expect(tools.counts.transfers).toBe(before + 1);
  });

  it('asks again with a new state when answers are missing; the presented one is used up', async () => {
    const before = tools.counts.transfers;
    const first = await firstRound(call, SYNC);
    const reasked = await callTool(server.url, { ...call, requestState: first }, SYNC);
    expect(reasked.result.resultType).toBe('input_required');
    const second = String(reasked.result.requestState);
    expect(second).not.toBe(first);
    const stale = await callTool(
      server.url,
      { ...call, inputResponses: { confirm: yes }, requestState: first },
      SYNC,
    );
    expect(stale.error).toEqual(USED);
    const done = await callTool(
      server.url,
      { ...call, inputResponses: { confirm: yes }, requestState: second },
      SYNC,
    );
    expect(done.result.resultType).toBe('complete');
    expect(tools.counts.transfers).toBe(before + 1);
  });
});

describe('the prepare round of a task', () => {
  const call = { name: 'provision', arguments: {} };

  it('creates one task: its state presented again after the task ended is refused, no second task', async () => {
    const before = tools.counts.provisioned;
    const requestState = await firstRound(call, WITH_TASKS);
    const answered = { ...call, inputResponses: { go: yes }, requestState };
    const created = await callTool(server.url, answered, WITH_TASKS);
    expect(created.result.resultType).toBe('task');
    await waitFor(() => tools.counts.provisioned === before + 1, 'the task to run');
    const tasks = await taskCount(server.runtime.store);
    const again = await callTool(server.url, answered, WITH_TASKS);
    expect(again.error).toEqual(USED);
    await sleep(200);
    expect(tools.counts.provisioned).toBe(before + 1);
    expect(await taskCount(server.runtime.store)).toBe(tasks);
  });

  it('joins its task when the creating round is retried with the same idempotency key', async () => {
    const before = tools.counts.provisioned;
    const key = { [IDEMPOTENCY_KEY]: `provision-${Date.now()}` };
    const requestState = await firstRound(call, WITH_TASKS, key);
    const answered = { ...call, inputResponses: { go: yes }, requestState };
    const created = await callTool(server.url, answered, WITH_TASKS, key);
    expect(created.result.resultType).toBe('task');
    const retried = await callTool(server.url, answered, WITH_TASKS, key);
    expect(retried.error).toBeUndefined();
    expect(retried.result.taskId).toBe(created.result.taskId);
    await waitFor(() => tools.counts.provisioned === before + 1, 'the task to run');
    await sleep(200);
    expect(tools.counts.provisioned).toBe(before + 1);
  });
});
