// One-time requestState across replicas: two servers on one PostgreSQL schema share the record of used states, so
// a round acted on by one replica is refused by the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDurableServer, type DurableTestServer } from '../support/durable-server.js';
import {
  callTool,
  oneTimeTools,
  taskCount,
  TASKS_EXT,
  yes,
  type OneTimeTools,
} from '../support/one-time-tools.js';
import { withPostgres } from '../support/postgres.js';
import { usePostgresStores } from '../support/postgres-stores.js';

const SYNC = { elicitation: {} };
const WITH_TASKS = { elicitation: {}, extensions: { [TASKS_EXT]: {} } };
const USED = { code: -32602, message: 'Invalid params: requestState rejected (already used)' };

await withPostgres('one-time requestState across PostgreSQL replicas', () => {
  const stores = usePostgresStores('dmcp_once');
  let a: DurableTestServer;
  let b: DurableTestServer;
  let tools: OneTimeTools;

  beforeAll(async () => {
    tools = oneTimeTools();
    const replica = () =>
      startDurableServer({ toolSets: [tools.toolSet], stateSecret: 'shared', store: () => stores.open() });
    [a, b] = await Promise.all([replica(), replica()]);
  });

  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  describe('two replicas', () => {
    it('refuse on one a confirmed synchronous round the other ran', async () => {
      const call = { name: 'transfer', arguments: { amount: 5 } };
      const first = await callTool(a.url, call, SYNC);
      const confirmed = {
        ...call,
        inputResponses: { confirm: yes },
        requestState: first.result.requestState,
      };
      expect((await callTool(b.url, confirmed, SYNC)).result.resultType).toBe('complete');
      expect((await callTool(a.url, confirmed, SYNC)).error).toEqual(USED);
      expect((await callTool(b.url, confirmed, SYNC)).error).toEqual(USED);
      expect(tools.counts.transfers).toBe(1);
    });

    it('create one task from a prepare round presented to both', async () => {
      const call = { name: 'provision', arguments: {} };
      const first = await callTool(b.url, call, WITH_TASKS);
      const answered = { ...call, inputResponses: { go: yes }, requestState: first.result.requestState };
      const replies = await Promise.all([
        callTool(a.url, answered, WITH_TASKS),
        callTool(b.url, answered, WITH_TASKS),
      ]);
      expect(replies.filter((r) => r.result.resultType === 'task')).toHaveLength(1);
      expect(replies.filter((r) => r.error?.message === USED.message)).toHaveLength(1);
      const end = Date.now() + 8_000;
      while (tools.counts.provisioned === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect((await callTool(a.url, answered, WITH_TASKS)).error).toEqual(USED);
      expect(await taskCount(a.runtime.store)).toBe(1);
      expect(tools.counts.provisioned).toBe(1);
    });
  });
});
