// Statements with parameters run as named prepared statements: each connection parses and plans one once, then
// only binds and executes it. A statement whose prepared form went stale runs unnamed from then on.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { sqlState } from './errors.js';

export type Params = readonly unknown[];

export interface PreparedStatements {
  /** The query config of `sql`: named when it has parameters (and naming is on and has not failed for it). */
  statement(sql: string, params: Params): pg.QueryConfig;
  /** Whether `err` says that the named statement of `sql` went stale (and stops naming it). */
  stale(err: unknown, sql: string): boolean;
}

/**
 * SQLSTATEs of a prepared statement that can no longer run as prepared: its result changed shape (another
 * process migrated the schema: "cached plan must not change result type"), or the server no longer has it (a
 * pooler between us and the server dropped it).
 */
const STALE_STATEMENT = new Set(['0A000', '26000']);

/** `enabled` false: every statement runs unnamed (poolers that do not keep prepared statements). */
export function createPreparedStatements(enabled: boolean): PreparedStatements {
  // Statement text → its name; texts that failed as prepared statements run unnamed from then on.
  const names = new Map<string, string>();
  const unnamed = new Set<string>();
  return {
    statement(sql, params) {
      const values = params as unknown[];
      if (!enabled || params.length === 0 || unnamed.has(sql)) return { text: sql, values };
      let name = names.get(sql);
      if (name === undefined) {
        name = `dmcp_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
        names.set(sql, name);
      }
      return { name, text: sql, values };
    },
    stale(err, sql) {
      const code = sqlState(err);
      if (code === undefined || !STALE_STATEMENT.has(code) || !names.has(sql) || unnamed.has(sql))
        return false;
      if (code === '0A000' && !/cached plan/i.test((err as Error).message)) return false;
      unnamed.add(sql);
      return true;
    },
  };
}
