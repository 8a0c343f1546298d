// The TaskStore contract every backend must pass: port behaviour only (never SQL), time always injected. The tests
// live by topic in contract/; this runs them all, in one suite per backend.
import { describe } from 'vitest';
import { cancelContract } from './contract/cancel.contract.js';
import { changesContract } from './contract/changes.contract.js';
import { childrenContract } from './contract/children.contract.js';
import { concurrencyContract } from './contract/concurrency.contract.js';
import { concurrencyHoldContract } from './contract/concurrency-hold.contract.js';
import { debounceContract } from './contract/debounce.contract.js';
import { concurrencyHoldersContract } from './contract/concurrency-holders.contract.js';
import { outsideEventsContract } from './contract/outside-events.contract.js';
import { consumeOnceContract } from './contract/consume-once.contract.js';
import { createAndClaimContract } from './contract/create-claim.contract.js';
import { fairnessContract } from './contract/fairness.contract.js';
import { finishContract } from './contract/finish.contract.js';
import {
  CONTRACT_TEST_TIMEOUT_MS,
  useContractStore,
  type TaskStoreContractOptions,
} from './contract/harness.contract.js';
import { historyContract } from './contract/history.contract.js';
import { housekeepingContract } from './contract/housekeeping.contract.js';
import { idempotencyContract } from './contract/idempotency.contract.js';
import { liveInputContract } from './contract/live-input.contract.js';
import { pausesContract } from './contract/pauses.contract.js';
import { priorityContract } from './contract/priority.contract.js';
import { quotaContract } from './contract/quota.contract.js';
import { rateLimitContract } from './contract/rate-limits.contract.js';
import { scopeContract } from './contract/scope.contract.js';
import { sessionsContract } from './contract/sessions.contract.js';
import { streamsContract } from './contract/streams.contract.js';
import { storedBytesContract } from './contract/stored-bytes.contract.js';
import { shownContract } from './contract/shown.contract.js';
import { traceContextContract } from './contract/trace-context.contract.js';
import { waitsContract } from './contract/waits.contract.js';

export {
  newTask,
  type ContractTaskStore,
  type TaskStoreContractOptions,
} from './contract/harness.contract.js';
export {
  expectLimitHeldAfterUpgrade,
  expectPausesAfterUpgrade,
  expectPrioritiesAfterUpgrade,
  expectUpgradedErrorOutcomes,
  expectUpgradedInspection,
  expectUpgradedLineOrder,
  expectUpgradedOutcomes,
  expectUpgradedTasksResume,
  sealingSensitive,
  seedErrorOutcomeTasks,
  seedLineBeforeUpgrade,
  seedOutcomeTasks,
  seedUpgradeTasks,
} from './contract/upgrade.contract.js';

/**
 * Registers the suite `TaskStore contract: <name>`: every topic of the contract (creation and claims, endings, cancel,
 * housekeeping, the change feed, sessions, waits, idempotency, quotas, stored bytes, fairness, one-time keys, claim
 * scopes, history, shown tasks, live input, concurrency limits and their holders, priorities, rate limits, debounce keys,
 * operators' pauses, child tasks) against a new store per test. Tests of a capability
 * the store lacks (an optional method of the port left out) skip themselves.
 */
export function runTaskStoreContract(options: TaskStoreContractOptions): void {
  describe(`TaskStore contract: ${options.name}`, { timeout: CONTRACT_TEST_TIMEOUT_MS }, () => {
    const h = useContractStore(options);
    createAndClaimContract(h);
    finishContract(h);
    cancelContract(h);
    housekeepingContract(h);
    changesContract(h);
    sessionsContract(h);
    waitsContract(h);
    idempotencyContract(h);
    quotaContract(h);
    storedBytesContract(h);
    fairnessContract(h);
    consumeOnceContract(h);
    scopeContract(h);
    historyContract(h);
    shownContract(h);
    liveInputContract(h);
    concurrencyContract(h);
    concurrencyHoldContract(h);
    concurrencyHoldersContract(h);
    outsideEventsContract(h);
    priorityContract(h);
    rateLimitContract(h);
    debounceContract(h);
    pausesContract(h);
    traceContextContract(h);
    streamsContract(h);
    childrenContract(h);
  });
}
