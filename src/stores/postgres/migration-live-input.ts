// Migration 20 of the PostgreSQL store: the index of the tasks whose run waits for live input.

export const liveInputMigration = {
  version: 20,
  name: 'live-input-waits',
  // tasks_live_input: the tasks whose run waits for live input (ctx.waitForInput: input_required under a lease), by
  // lease end, so that the sweep finding those whose lease lapsed reads them only, not every task waiting for its
  // owner's input. An index only: older processes keep working.
  sql: (s: string): string => `
    CREATE INDEX tasks_live_input ON ${s}.tasks (lease_until)
      WHERE status = 'input_required' AND lease_owner IS NOT NULL;
  `,
};
