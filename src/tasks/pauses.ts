// Operators' pauses of a tool or a concurrency key: what a pause names, which tasks it holds back, and who may set it.
import { MAX_CONCURRENCY_KEY_LENGTH } from './concurrency.js';

/** What a pause names: a tool (by name) or a concurrency key (as stored: a keyed digest for derived keys). */
export type PauseKind = 'tool' | 'key';

export const PAUSE_KINDS: readonly PauseKind[] = ['tool', 'key'];

/** A pause as an operator asks for it: `tenant` absent pauses the tool or key for every tenant. */
export interface PauseTarget {
  kind: PauseKind;
  name: string;
  tenant?: string;
}

/** A pause in force, with the tasks it holds back now. */
export interface AdminPause extends PauseTarget {
  /** When it was set (ms since the epoch). */
  pausedAt: number;
  /** Working tasks a claim found paused and took out of the line (within the pause's tenant, if it has one). */
  pausedTasks: number;
}

/** A concurrency key with tasks parked for a slot (TaskAdmin.flow). */
export interface AdminFlowKey {
  /** The key as stored (a derived key is a keyed digest when payloads are sealed: never shown in clear). */
  key: string;
  /** The limit of the first task in the key's line. */
  limit: number;
  /** Slots held now (every tenant's runs). */
  slotsHeld: number;
  /** Parked tasks of the key within the operator's tenants. */
  parked: number;
}

/** The result of pausing: `created` false when the same pause was in force already. */
export type AdminPauseResult =
  { ok: true; created: boolean } | { ok: false; reason: 'forbidden' | 'too_many' };

/** The result of resuming: how many paused tasks became runnable again. */
export type AdminResumeResult = { ok: true; resumed: number } | { ok: false; reason: 'not_found' };

/** The most pauses kept at once (a claim reads them all; more are refused). */
export const MAX_PAUSES = 1_000;
/** The longest tool name or tenant a pause names. */
export const MAX_PAUSE_NAME_LENGTH = MAX_CONCURRENCY_KEY_LENGTH;

const PRINTABLE = /^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;
const nameProblem = (what: string, text: string): string | undefined =>
  text.length === 0 || text.length > MAX_PAUSE_NAME_LENGTH || !PRINTABLE.test(text)
    ? `${what} must be 1 to ${MAX_PAUSE_NAME_LENGTH} printable characters`
    : undefined;

/** Why a pause is refused as written, or undefined when it is valid. */
export function pauseProblem(target: PauseTarget): string | undefined {
  if (!PAUSE_KINDS.includes(target.kind)) return `kind must be 'tool' or 'key'`;
  return (
    nameProblem('name', target.name) ??
    (target.tenant === undefined ? undefined : nameProblem('tenant', target.tenant))
  );
}

/** Whether an operator of `scope` (an AdminScope, admin.ts) may set, see or lift a pause of `tenant` (absent: every tenant's). */
export const pauseInScope = (
  scope: { tenants: 'all' | readonly string[] },
  tenant: string | undefined,
): boolean => scope.tenants === 'all' || (tenant !== undefined && scope.tenants.includes(tenant));

/** What a claim knows of a task it weighs against the pauses. */
export interface PausedCandidate {
  tool: string;
  tenant: string;
  concurrency_key?: string | null;
}

/** The pause that holds back a task of this tool, tenant and key, if any. */
export function pauseOf(pauses: readonly PauseTarget[], task: PausedCandidate): PauseTarget | undefined {
  return pauses.find(
    (p) =>
      (p.tenant === undefined || p.tenant === task.tenant) &&
      (p.kind === 'tool' ? p.name === task.tool : p.name === task.concurrency_key),
  );
}

/** The status message its owner sees while a task is paused. */
export const PAUSED_MESSAGE = 'Paused by an operator: the task runs once it is resumed.';
