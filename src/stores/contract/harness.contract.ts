// What the contract's topic files share: fixed owners and times, a new task, and the store of the running test.
import { afterEach, beforeEach, expect } from 'vitest';
import { newTaskId } from '../../tasks/ids.js';
import type { SessionStore } from '../../tasks/sessions.js';
import type { TaskStore } from '../../tasks/store.js';
import type { ClaimedTask, NewTask, TaskOwner, TaskSnapshot } from '../../tasks/task.js';

/**
 * A store the contract runs on: the TaskStore port with the two counts its tests read (both built-in stores have
 * them), and the sessions of the 2025-11-25 wire if it keeps them (their tests skip themselves otherwise).
 */
export interface ContractTaskStore extends TaskStore {
  /** Runnable tasks waiting for a worker, waits that are due included. */
  countRunnable(now: number): Promise<number>;
  /** The bytes one owner's kept tasks store (arguments, results, step values, input requests and answers). */
  storedBytes(owner: TaskOwner): Promise<number>;
  /** Sessions of the 2025-11-25 wire, when the store keeps them. */
  readonly sessions?: SessionStore;
}

/** How the contract opens the store under test. */
export interface TaskStoreContractOptions {
  /** The suite's name: `TaskStore contract: <name>`. */
  name: string;
  /** A new, empty store: called before every test (the test closes it). */
  newStore: () => Promise<ContractTaskStore> | ContractTaskStore;
  /**
   * A second instance on the storage of the store newStore last made, as another process or replica would open it:
   * the race tests then run across both (without it they run on one instance and prove much less).
   */
  openPeer?: () => Promise<ContractTaskStore> | ContractTaskStore;
}

/**
 * How long one contract test may take (Vitest's default is 5 s): some run hundreds of store calls, and the suite runs
 * in projects of its users, on machines as loaded as theirs.
 */
export const CONTRACT_TEST_TIMEOUT_MS = 60_000;
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
/** How many tasks `claimAll` of taskHelpers claims at most. */
const CLAIM_ALL_MAX = 50;

/**
 * What the contracts of limits and pauses share: `create` makes a task at the test's time (overrides applied) and
 * answers its id; `claimAll` claims with a lease of LEASE at the test's time until nothing is left (at most 50).
 */
export function taskHelpers(h: ContractStore) {
  return {
    create: async (overrides: Partial<NewTask> = {}): Promise<string> =>
      (await h.store.create(newTask({ createdAt: h.t, ...overrides }))).id,
    claimAll: async (worker = 'w1'): Promise<ClaimedTask[]> => {
      const out: ClaimedTask[] = [];
      for (let i = 0; i < CLAIM_ALL_MAX; i++) {
        const c = await h.store.claim(worker, LEASE, h.t);
        if (c === undefined) break;
        out.push(c);
      }
      return out;
    },
  };
}

export interface ContractStore {
  readonly store: ContractTaskStore;
  /** The test's time: T0 when it starts; tests move it on. */
  t: number;
  openPeer?: () => Promise<ContractTaskStore> | ContractTaskStore;
  snap(id: string, at?: number, owner?: TaskOwner): Promise<TaskSnapshot>;
  claim(worker?: string, at?: number, leaseMs?: number): Promise<ClaimedTask>;
  /** Creates a task and claims it (the store must be otherwise empty of runnable work). */
  running(overrides?: Partial<NewTask>): Promise<ClaimedTask>;
  /** Claims the task, suspends it asking for `keys`, and returns the run's token. */
  suspend(keys: string[], at?: number): Promise<ClaimedTask>;
}

/** Registers the hooks that open a store before each test of the enclosing suite and close it after. */
export function useContractStore({ newStore, openPeer }: TaskStoreContractOptions): ContractStore {
  let current: ContractTaskStore | undefined;
  const h: ContractStore = {
    get store(): ContractTaskStore {
      return current as ContractTaskStore;
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
