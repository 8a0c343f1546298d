-- The operators' search (TaskAdmin.list) reads a page in time order without sorting: newest first over all
-- tenants (tasks_created), within one tenant (tasks_tenant_created: a tenant-scoped operator), of one tool
-- (tasks_tool_created), or by last change (tasks_updated, which also bounds the overview's windows). The id ends
-- each key: it breaks ties of one millisecond, as the keyset cursor does. IF NOT EXISTS: on a large table an
-- operator may build them beforehand with CREATE INDEX CONCURRENTLY (same names), and writes are not held up.
CREATE INDEX IF NOT EXISTS tasks_created ON :schema.tasks (created_at, id);
CREATE INDEX IF NOT EXISTS tasks_tenant_created ON :schema.tasks (tenant, created_at, id);
CREATE INDEX IF NOT EXISTS tasks_tool_created ON :schema.tasks (tool, created_at, id);
CREATE INDEX IF NOT EXISTS tasks_updated ON :schema.tasks (updated_at, id);
