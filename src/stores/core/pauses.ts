// Operators' pauses as both stores keep them: a pause row (tenant '' for every tenant) to and from the port's shape,
// which pauses an operator sees, and the flow view's walk over the keys with parked tasks.
import type { AdminScope } from '../../tasks/admin.js';
import {
  pauseInScope,
  type AdminFlowKey,
  type AdminPause,
  type PauseKind,
  type PauseTarget,
} from '../../tasks/pauses.js';

/** A pause as stored. */
export interface StoredPause {
  kind: PauseKind;
  name: string;
  tenant: string;
  paused_at: number | string;
}

/** The tenant column of a pause: '' for every tenant. */
export const storedTenant = (target: PauseTarget): string => target.tenant ?? '';

/** A stored pause as a claim weighs it. */
export const toPauseTarget = (row: StoredPause): PauseTarget => ({
  kind: row.kind,
  name: row.name,
  ...(row.tenant === '' ? {} : { tenant: row.tenant }),
});

/** The pauses of `rows` an operator of `scope` sees. */
export const visiblePauses = <R extends StoredPause>(scope: AdminScope, rows: readonly R[]): R[] =>
  rows.filter((r) => pauseInScope(scope, r.tenant === '' ? undefined : r.tenant));

/** A stored pause as operators see it, with the tasks it holds back. */
export const toAdminPause = (row: StoredPause, pausedTasks: number): AdminPause => ({
  ...toPauseTarget(row),
  pausedAt: Number(row.paused_at),
  pausedTasks: Number(pausedTasks),
});

/** What the flow view reads of one key: the parked tasks within the scope, its limit and the slots held. */
export interface FlowReads {
  parkedIn(key: string): Promise<number> | number;
  limitOf(key: string): Promise<number | undefined> | number | undefined;
  slotsHeld(key: string): Promise<number> | number;
}

/** The keys of `keys` with tasks of the scope parked, at most `max`, each with its limit and slots held. */
export async function flowKeys(
  keys: readonly string[],
  max: number,
  reads: FlowReads,
): Promise<AdminFlowKey[]> {
  const out: AdminFlowKey[] = [];
  for (const key of keys) {
    if (out.length >= max) break;
    const parked = Number(await reads.parkedIn(key));
    if (parked === 0) continue;
    const limit = await reads.limitOf(key);
    if (limit === undefined) continue;
    out.push({ key, limit: Number(limit), slotsHeld: Number(await reads.slotsHeld(key)), parked });
  }
  return out;
}
