// PostgreSQL of the pg rows: a reachability check before the run, fresh schemas for the run, dropped at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PG_CONNECTIONS, PG_PROBE_TIMEOUT_MS, PG_REPLICAS, PG_SCALE_POOL } from '../config.js';
import { log } from '../format.js';
import type { Params } from '../types.js';

/** The servers that get a schema of their own. */
export type PgServerKey =
  | 'pg-raw'
  | 'ours-pg1'
  | 'ours-pg3'
  | 'ours-pg-push1'
  | 'ours-pg-push3'
  | 'ours-pg-ops-small'
  | 'ours-pg-ops-large';

export interface PgRun {
  skipped?: undefined;
  url: string;
  schemas: Record<PgServerKey, string>;
  /** Set by the first dropSchemas call. */
  dropping?: Promise<boolean>;
}

export type PgPlan = PgRun | { skipped: string };

export type PostgresReport =
  | { skipped: string }
  | {
      skipped?: undefined;
      url: string;
      schemas: Record<PgServerKey, string>;
      connectionsRaw: number;
      replicas: number;
    };

export const redactUrl = (url: string): string => url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');

/** Connections the pg rows hold at once: the raw child's, and per server process its pool and its LISTEN client. */
// The raw loops, the creation/polling servers (pool 10 + LISTEN each), the push servers (pool 4 + LISTEN each) and
// the two operator-list servers (pool PG_SCALE_POOL + LISTEN each).
const PG_CONNECTIONS_NEEDED =
  PG_CONNECTIONS + (1 + PG_REPLICAS) * (10 + 1) + (1 + PG_REPLICAS) * (4 + 1) + 2 * (PG_SCALE_POOL + 1);

function newClient(url: string): pg.Client {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  return client;
}

/** Why PostgreSQL at `url` cannot serve the pg rows, or undefined if it can. */
async function unavailable(url: string): Promise<string | undefined> {
  const client = newClient(url);
  try {
    await client.connect();
    const { rows } = await client.query<{ free: number }>(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
         - (SELECT count(*) FROM pg_stat_activity)::int AS free`,
    );
    const free = rows[0]!.free;
    if (free < PG_CONNECTIONS_NEEDED) {
      return `PostgreSQL at ${redactUrl(url)} has ${free} free connections, the rows need ${PG_CONNECTIONS_NEEDED}`;
    }
    return undefined;
  } catch (err) {
    const e = err as { message?: string; code?: string; name?: string };
    const why = err instanceof Error ? e.message || e.code || e.name : String(err);
    return `PostgreSQL at ${redactUrl(url)} is unreachable (${why})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Where the pg rows run (`url`, one fresh schema name per pg server), or why they are skipped. */
export async function planPostgres(params: Pick<Params, 'noPg' | 'pg'>): Promise<PgPlan> {
  if (params.noPg) return { skipped: 'disabled with --no-pg' };
  const url = params.pg;
  const skipped = await unavailable(url);
  if (skipped !== undefined) return { skipped };
  const base = `dmcp_bench_${randomBytes(5).toString('hex')}`;
  return {
    url,
    schemas: {
      'pg-raw': `${base}_raw`,
      'ours-pg1': `${base}_r1`,
      'ours-pg3': `${base}_r3`,
      'ours-pg-push1': `${base}_p1`,
      'ours-pg-push3': `${base}_p3`,
      'ours-pg-ops-small': `${base}_os`,
      'ours-pg-ops-large': `${base}_ol`,
    },
  };
}

/** Drops the run's schemas (after every server has stopped), once; resolves false if that failed. */
export function dropSchemas(plan: PgPlan | undefined): Promise<boolean> {
  if (plan === undefined || plan.skipped !== undefined) return Promise.resolve(true);
  plan.dropping ??= dropNow(plan);
  return plan.dropping;
}

async function dropNow(plan: PgRun): Promise<boolean> {
  const client = newClient(plan.url);
  const names = Object.values(plan.schemas);
  try {
    await client.connect();
    for (const name of names) {
      await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(name)} CASCADE`);
    }
    log(`dropped PostgreSQL schemas ${names.join(', ')}`);
    return true;
  } catch (err) {
    log(`WARNING: could not drop the PostgreSQL schemas ${names.join(', ')}: ${(err as Error).message}`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function postgresReport(plan: PgPlan): PostgresReport {
  if (plan.skipped !== undefined) return { skipped: plan.skipped };
  return {
    url: redactUrl(plan.url),
    schemas: plan.schemas,
    connectionsRaw: PG_CONNECTIONS,
    replicas: PG_REPLICAS,
  };
}
