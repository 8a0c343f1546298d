// Conditions the SQLite statements share: unfinished tasks, and waiting tasks whose time has come.
export const NON_TERMINAL = `status IN ('working','input_required')`;
/**
 * Waiting tasks are read through tasks_wake. `+status` keeps SQLite from choosing tasks_status instead (it has no
 * statistics, and prefers an equality to a range): that read every working task and sorted them, some 25 ms per
 * claim and per look-ahead with 100,000 sleeping tasks, where the range of wake_at holds only the ones due.
 */
export const WORKING = `+status = 'working'`;
/** A waiting task whose time has come: claimable like a runnable one (its lease was released when it began to wait). */
export const DUE = `wake_at IS NOT NULL AND wake_at <= @now AND ${WORKING} AND (expires_at IS NULL OR expires_at > @now)`;
