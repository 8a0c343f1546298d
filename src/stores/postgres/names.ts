// Schema and channel names: validated once, then quoted, because they are spliced into SQL text.
import pg from 'pg';

export const DEFAULT_SCHEMA = 'durable_mcp';
export const POOL_APPLICATION_NAME = 'durable-mcp';
export const LISTEN_APPLICATION_NAME = 'durable-mcp-listen';

// 50 leaves room for the "_task_changes" suffix within PostgreSQL's 63-byte identifier limit.
const SCHEMA_SHAPE = /^[a-z_][a-z0-9_]{0,49}$/;

export interface SchemaNames {
  /** The schema name as given (for catalog lookups). */
  schema: string;
  /** The schema as a quoted identifier, ready to prefix table names. */
  quoted: string;
  /** The NOTIFY channel carrying task changes, as passed to pg_notify. */
  channel: string;
}

export function schemaNames(schema: string = DEFAULT_SCHEMA): SchemaNames {
  if (!SCHEMA_SHAPE.test(schema)) {
    throw new Error(
      `invalid PostgreSQL schema name "${schema}": use lower-case letters, digits and _ (at most 50)`,
    );
  }
  return { schema, quoted: pg.escapeIdentifier(schema), channel: `${schema}_task_changes` };
}
