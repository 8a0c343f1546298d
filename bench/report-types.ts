// The shape of the run's report (latest.json): what report.ts builds and the tables of tables/ read.
import type { PostgresReport } from './harness/postgres.js';
import type { FailedRow, Row, SectionReport } from './types-rows.js';
import type { FillSummary, Params, PgScaleFill, SleepFill } from './types.js';

export interface Machine {
  cpuModel: string;
  cores: number;
  totalMemGiB: number;
  platform: string;
  release: string;
  node: string;
  loadavg: number[];
  commit: string;
  date: string;
}

export type ScaleReport =
  | { skipped: string }
  | { skipped?: undefined; small: FillSummary; large: FillSummary; totalMs: number; sampled: number };

export interface Report {
  machine: Machine;
  /** Every section ran (done, failed or skipped): false while the run goes on, or if it stopped early. */
  complete: boolean;
  sections: SectionReport[];
  /** The rows that failed, with where and why. */
  failed: FailedRow[];
  parameters: Omit<Params, 'help' | 'cpuProf' | 'pg' | 'noPg' | 'noScale' | 'only' | 'out'> & {
    only?: string;
    host: string;
    protocolVersion: string;
  };
  loadGenerator: { name: 'autocannon'; version: string; inProcess: true };
  peer: Record<string, string>;
  servers: Record<string, string>;
  postgres: PostgresReport;
  scale?: ScaleReport;
  pgScale?: PgScaleFill;
  sleepers?: SleepFill;
  scenarios: Row[];
}
