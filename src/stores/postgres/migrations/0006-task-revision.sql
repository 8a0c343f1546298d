-- Orders the snapshots a process gets from its own commits and from reads (no table rewrite: constant default).
ALTER TABLE :schema.tasks ADD COLUMN revision bigint NOT NULL DEFAULT 0;
