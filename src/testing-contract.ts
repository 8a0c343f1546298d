/**
 * Public entry of `durable-mcp/testing/contract`: the contract suite every `TaskStore` passes, for a backend of your
 * own. Call `runTaskStoreContract` in a Vitest test file with a factory of new, empty stores: it registers one suite
 * that runs every rule of the port against a fresh store per test, with the time injected (no clock, no sleeps).
 * Vitest (4.x) is an optional peer dependency of the package: install it in the project that runs the suite.
 *
 * @module durable-mcp/testing/contract
 */
export {
  expectUpgradedTasksResume,
  newTask,
  runTaskStoreContract,
  seedUpgradeTasks,
  type ContractTaskStore,
  type TaskStoreContractOptions,
} from './stores/task-store.contract.js';
export { runTaskAdminContract } from './stores/task-admin.contract.js';
export type { TaskStore } from './tasks/store.js';
export type { NewTask } from './tasks/task.js';
