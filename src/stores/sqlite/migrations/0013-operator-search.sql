-- The operators' search (TaskAdmin.list) reads a page in time order without sorting: newest first over all
-- tenants (tasks_created), within one tenant (tasks_tenant_created: a tenant-scoped operator), of one tool
-- (tasks_tool_created), or by last change (tasks_updated, which also bounds the overview's windows). The id ends
-- each key: it breaks ties of one millisecond, as the keyset cursor does.
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_tenant_created ON tasks (tenant, created_at, id);
CREATE INDEX tasks_tool_created ON tasks (tool, created_at, id);
CREATE INDEX tasks_updated ON tasks (updated_at, id);
