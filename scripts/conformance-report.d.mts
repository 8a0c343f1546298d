// Types of scripts/conformance-report.mjs (plain JavaScript, run by node without a compiler).
export interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
  details?: { message?: unknown };
}

export interface ScenarioResult {
  scenario: string;
  status: 'passed' | 'failed' | 'skipped';
  note: string;
}

export interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}

export interface RunSummary extends Tally {
  label: string;
  scenarios: ScenarioResult[];
  verdict: 'PASS' | 'FAIL' | 'SKIPPED';
  problem?: string;
}

export function printable(text: unknown): string;
export function scenarioResult(scenario: string, checks: Check[]): ScenarioResult;
export function readRun(dir: string): ScenarioResult[];
export function summariseRun(label: string, exit: number | string, scenarios: ScenarioResult[]): RunSummary;
export function formatRun(run: RunSummary): string[];
export function tallyOf(runs: RunSummary[]): Tally;
export function tallyLine(tally: Tally): string;
export function writeTally(file: string, tally: Tally): void;
export function readTally(file: string): Tally | undefined;
