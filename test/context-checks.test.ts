// A handler's mistakes with ctx.sleep, ctx.sleepUntil, ctx.status, ctx.map and ctx.input are errors that name the call, the
// same with and without a task, and never reach the store or the wire (where they would surface as a driver's error,
// a wake-up time no date can hold, a task stuck running, or a request no client can read).
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, textResult, type HandlerContext } from '../src/index.js';
import { createTestKit, type TestKit } from '../src/testing.js';
import { startDurableServer } from './support/durable-server.js';
import { lastMessage, rpc } from './support/server.js';

type Misuse = [label: string, use: (ctx: HandlerContext) => Promise<unknown>, message: string];
const MISUSES: Misuse[] = [
  ['a negative sleep', (ctx) => ctx.sleep('nap', -5), 'sleep "nap": ms must be a number of at least 0'],
  ['a NaN sleep', (ctx) => ctx.sleep('nap', NaN), 'sleep "nap": ms must be a number of at least 0'],
  ['an endless sleep', (ctx) => ctx.sleep('nap', Infinity), 'sleep "nap": ms must be a number of at least 0'],
  [
    'a sleep past the last date',
    (ctx) => ctx.sleep('nap', 1e20),
    'sleep "nap": 100000000000000000000 ms would end past the latest time a date can hold',
  ],
  ['an invalid date', (ctx) => ctx.sleepUntil('nap', new Date(NaN)), 'sleepUntil "nap": not a valid date'],
  ['a time past the last date', (ctx) => ctx.sleepUntil('nap', 9e15), 'sleepUntil "nap": not a valid date'],
  [
    'a status that is not a string',
    (ctx) => ctx.status({ done: 1 } as never),
    'status: the message must be a string, not object',
  ],
  [
    'an input request of no known method',
    async (ctx) => ctx.input('ask', { method: 'foo/bar', params: {} } as never),
    'input request "ask": method must be elicitation/create, sampling/createMessage or roots/list (got "foo/bar")',
  ],
  [
    'an elicitation without params',
    async (ctx) => ctx.input('ask', { method: 'elicitation/create' } as never),
    'input request "ask" (elicitation/create): params: Invalid input: expected object, received undefined',
  ],
  [
    'an input request holding what JSON cannot',
    async (ctx) =>
      ctx.input('ask', {
        method: 'elicitation/create',
        params: { message: 'm', requestedSchema: { type: 'object', properties: {} }, n: 10n as never },
      }),
    'input request "ask" (elicitation/create): params.n: Expected a JSON value',
  ],
  [
    'a map running no item at once',
    (ctx) => ctx.map('each', [1], (n) => n, { concurrency: 0 }),
    'map "each": concurrency must be a whole number from 1 to 100, not 0',
  ],
  [
    'a map running too many at once',
    (ctx) => ctx.map('each', [1], (n) => n, { concurrency: 101 }),
    'map "each": concurrency must be a whole number from 1 to 100, not 101',
  ],
  [
    'a map over something not a list',
    (ctx) => ctx.map('each', 'abc' as never, (n) => n),
    'map "each": items must be an array',
  ],
  [
    'a map over an item JSON cannot hold',
    (ctx) => ctx.map('each', [{ at: new Date(0) as never }], () => 1),
    'map "each": every item must be a JSON value: items[0].at is not a plain object',
  ],
  [
    'a map over a number JSON cannot hold',
    (ctx) => ctx.map('each', [1, NaN], () => 1),
    'map "each": every item must be a JSON value: items[1] is not a finite number',
  ],
  [
    'a map with a bad step option',
    (ctx) => ctx.map('each', [1], () => 1, { timeoutMs: -1 }),
    'step "each[0]": timeoutMs must be a number greater than 0',
  ],
];

const tools = MISUSES.map(([, use], i) =>
  defineTool({
    name: `misuse_${i}`,
    description: 'Misuses its context',
    task: { support: 'optional' },
    handler: async (_args, ctx) => {
      await use(ctx);
      return textResult('not reached');
    },
  }),
);

const kits: TestKit[] = [];
afterEach(async () => {
  for (const kit of kits.splice(0)) await kit.close();
});

describe('context misuse', () => {
  it('as a task: the task completes at once with a tool error naming the call', async () => {
    const kit = await createTestKit({ tools });
    kits.push(kit);
    for (const [i, [label, , message]] of MISUSES.entries()) {
      const task = await kit.start(`misuse_${i}`);
      await kit.settle();
      const ended = await task.get();
      expect(ended.status, label).toBe('completed');
      const result = ended.result as { isError?: boolean; content: { text: string }[] };
      expect(result.isError, label).toBe(true);
      expect(result.content[0]?.text, label).toBe(message);
    }
  });

  it('within a request: the same tool errors', async () => {
    const server = await startDurableServer({ toolSets: [{ tools }] });
    try {
      for (const [i, [label, , message]] of MISUSES.entries()) {
        const res = await rpc(server.url, 'tools/call', { name: `misuse_${i}`, arguments: {} });
        const body = lastMessage(res) as { result?: { isError?: boolean; content: { text: string }[] } };
        expect(body.result?.isError, label).toBe(true);
        expect(body.result?.content[0]?.text, label).toBe(message);
      }
    } finally {
      await server.close();
    }
  });
});
