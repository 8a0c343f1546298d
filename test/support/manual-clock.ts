// The manual clock of the testing kit, for the project's own tests.
export { createManualClock, type ManualClock } from '../../src/tasks/manual-clock.js';
