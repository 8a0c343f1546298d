// What the contract's topic files share: fixed owners and times, a new task, and the store of the running test.
import { afterEach, beforeEach, expect } from 'vitest';
import { newTaskId } from '../../tasks/ids.js';
import type { BuiltInTaskStore } from '../built-in.js';
import type { ClaimedTask, NewTask, TaskOwner, TaskSnapshot } from '../../tasks/task.js';

export interface TaskStoreContractOptions {
  name: string;
  newStore: () => Promise<BuiltInTaskStore> | BuiltInTaskStore;
  /** A second instance on the storage of the store newStore last made (as another process or replica would have). */
  openPeer?: () => Promise<BuiltInTaskStore> | BuiltInTaskStore;
}

export const T0 = 1_700_000_000_000;
export const LEASE = 1_000;
export const ALICE: TaskOwner = { tenant: 'acme', principal: 'alice' };
export const BOB: TaskOwner = { tenant: 'acme', principal: 'bob' };
export const OTHER_TENANT: TaskOwner = { tenant: 'globex', principal: 'alice' };
export const EXPIRED_ERROR = { code: -32603, message: 'task expired' };

export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    id: newTaskId(),
    owner: ALICE,
    tool: 'echo',
    args: { text: 'hello', n: 1 },
    createdAt: T0,
    ttlMs: 60_000,
    pollIntervalMs: 500,
    statusMessage: 'Queued.',
    replayAfterCrash: true,
    clientCapabilities: { elicitation: {} },
    answers: {},
    ...overrides,
  };
}

export function must<T>(value: T | undefined, what = 'value'): T {
  if (value === undefined) throw new Error(`expected a ${what}`);
  return value;
}

/** The store under test, new for every test, with the test's clock and the steps many tests begin with. */
export interface ContractStore {
  readonly store: BuiltInTaskStore;
  /** The test's time: T0 when it starts; tests move it on. */
  t: number;
  openPeer?: () => Promise<BuiltInTaskStore> | BuiltInTaskStore;
  snap(id: string, at?: number, owner?: TaskOwner): Promise<TaskSnapshot>;
  claim(worker?: string, at?: number, leaseMs?: number): Promise<ClaimedTask>;
  /** Creates a task and claims it (the store must be otherwise empty of runnable work). */
  running(overrides?: Partial<NewTask>): Promise<ClaimedTask>;
  /** Claims the task, suspends it asking for `keys`, and returns the run's token. */
  suspend(keys: string[], at?: number): Promise<ClaimedTask>;
}

/** Registers the hooks that open a store before each test of the enclosing suite and close it after. */
export function useContractStore({ newStore, openPeer }: TaskStoreContractOptions): ContractStore {
  let current: BuiltInTaskStore | undefined;
  const h: ContractStore = {
    get store(): BuiltInTaskStore {
      return current as BuiltInTaskStore;
    },
    t: T0,
    openPeer,
    async snap(id, at = h.t, owner = ALICE) {
      const got = await h.store.get(id, owner, at);
      if (typeof got === 'string') throw new Error(`expected a snapshot of ${id}, got ${got}`);
      return got;
    },
    async claim(worker = 'w1', at = h.t, leaseMs = LEASE) {
      return must(await h.store.claim(worker, leaseMs, at), 'claimed task');
    },
    async running(overrides = {}) {
      const task = await h.store.create(newTask({ createdAt: h.t, ...overrides }));
      const claimed = await h.claim();
      expect(claimed.id).toBe(task.id);
      return claimed;
    },
    async suspend(keys, at = h.t) {
      const claimed = await h.claim('w1', at);
      const requests = Object.fromEntries(keys.map((k) => [k, { method: 'elicitation/create', key: k }]));
      expect(await h.store.finish(claimed.id, claimed.token, { kind: 'input_required', requests }, at)).toBe(
        true,
      );
      return claimed;
    },
  };
  beforeEach(async () => {
    current = await newStore();
    h.t = T0;
  });
  afterEach(async () => {
    await h.store.close();
  });
  return h;
}
