-- tasks_live_input: the tasks whose run waits for live input (ctx.waitForInput: input_required under a lease), by
-- lease end, so that the sweep finding those whose lease lapsed reads them only, not every task waiting for its
-- owner's input. An index only: older processes keep working.
CREATE INDEX tasks_live_input ON :schema.tasks (lease_until)
  WHERE status = 'input_required' AND lease_owner IS NOT NULL;
