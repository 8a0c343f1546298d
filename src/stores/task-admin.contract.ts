// The TaskAdmin contract (the operators' port, TaskStore.admin) every backend that offers it must pass: port
// behaviour only, time injected. The tests live by topic in contract/admin-*.contract.ts.
import { describe } from 'vitest';
import { adminActionsContract } from './contract/admin-actions.contract.js';
import { adminErrorOutcomeContract } from './contract/admin-error-outcome.contract.js';
import { adminOutcomeContract } from './contract/admin-outcome.contract.js';
import { adminPagingContract } from './contract/admin-paging.contract.js';
import { adminSearchContract } from './contract/admin-search.contract.js';
import {
  CONTRACT_TEST_TIMEOUT_MS,
  useContractStore,
  type TaskStoreContractOptions,
} from './contract/harness.contract.js';

/**
 * Registers the suite `TaskAdmin contract: <name>`, for a store that offers the operators' port (`TaskStore.admin`):
 * search and paging, actions (cancel, retry, purge), outcomes. It opens stores as `runTaskStoreContract` does.
 */
export function runTaskAdminContract(options: TaskStoreContractOptions): void {
  describe(`TaskAdmin contract: ${options.name}`, { timeout: CONTRACT_TEST_TIMEOUT_MS }, () => {
    const h = useContractStore(options);
    adminSearchContract(h);
    adminActionsContract(h);
    adminOutcomeContract(h);
    adminPagingContract(h);
    adminErrorOutcomeContract(h);
  });
}
