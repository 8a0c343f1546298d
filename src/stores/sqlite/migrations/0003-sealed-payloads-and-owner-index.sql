ALTER TABLE tasks ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX tasks_owner_active ON tasks (tenant, principal) WHERE status IN ('working','input_required');
