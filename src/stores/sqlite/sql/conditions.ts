// Conditions the SQLite statements share: unfinished tasks, and waiting tasks whose time has come.
export const NON_TERMINAL = `status IN ('working','input_required')`;
/**
 * Waiting tasks are read through tasks_wake. `+status` keeps SQLite from choosing tasks_status instead (it has no
 * statistics, and prefers an equality to a range): that read every working task and sorted them, some 25 ms per
 * claim and per look-ahead with 100,000 sleeping tasks, where the range of wake_at holds only the ones due.
 */
export const WORKING = `+status = 'working'`;
/**
 * Fair claiming: each task gets a place in line (`fair_at`) when it is created. A task takes the place at the head of
 * the line (the lowest place among runnable tasks, or its creation time when none is waiting), or, if its owner already
 * has runnable tasks, the place just behind the owner's last one. So an owner's backlog is spread out behind the head
 * while another owner's first task goes to the head: claims alternate between the owners that wait, and no backlog
 * delays another owner's task by more than one task per owner ahead of it. A task whose wait ends (a sleep or retry
 * backoff come due, its input answered) takes a new place by the same rule, as a new task of its owner would then:
 * waking a parked backlog at once does not put it ahead of the tasks other owners queued meanwhile. A task handed
 * back (a released run, a lapsed lease after a crash) keeps its place.
 */
export const FAIR_STEP = 0.001;
export const FAIR_PLACE = `max(
  coalesce((SELECT fair_at FROM tasks INDEXED BY tasks_fair WHERE runnable = 1 AND fair_at IS NOT NULL
    ORDER BY fair_at LIMIT 1), @now),
  coalesce((SELECT max(fair_at) FROM tasks INDEXED BY tasks_owner_fair
    WHERE runnable = 1 AND tenant = @tenant AND principal = @principal) + ${FAIR_STEP}, 0))`;

/**
 * A waiting task whose time has come (its lease was released when it began to wait): the next claim gives it a new
 * place in line and makes it runnable (claims.ts, requeueWoken).
 */
export const DUE = `wake_at IS NOT NULL AND wake_at <= @now AND ${WORKING} AND (expires_at IS NULL OR expires_at > @now)`;
