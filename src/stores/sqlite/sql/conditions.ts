// Conditions the SQLite statements share: unfinished tasks, and waiting tasks whose time has come.
export const NON_TERMINAL = `status IN ('working','input_required')`;
/**
 * Waiting tasks are read through tasks_wake. `+status` keeps SQLite from choosing tasks_status instead (it has no
 * statistics, and prefers an equality to a range): that read every working task and sorted them, some 25 ms per
 * claim and per look-ahead with 100,000 sleeping tasks, where the range of wake_at holds only the ones due.
 */
export const WORKING = `+status = 'working'`;
/** A runnable task no live lease holds, not expired: one a claim may take (a task in line, waiting its turn). */
export const CLAIMABLE = `(lease_owner IS NULL OR lease_until < @now) AND (expires_at IS NULL OR expires_at > @now)`;

/**
 * Fair claiming: the line of runnable tasks is ordered by place (`fair_at`), then by when the place was taken
 * (`placed_at`), then by age. A task takes its place when it is created, when its wait ends (a sleep or retry backoff
 * come due, its input answered) and when an operator retries it: the place of the first task waiting in line (the
 * head; the time it takes it, when none waits), or, if its owner already has tasks waiting, the place just behind the
 * owner's last one. Only tasks waiting their turn count: a running task neither holds the head (a long run would
 * keep every newcomer at its old place) nor pushes its owner's next task back. A task taking an occupied place goes
 * behind its occupants, so a task woken again and again (a poller) queues behind whoever waits at the head instead
 * of winning the tie for being older (two places taken in the same millisecond go by age). So an owner's backlog is
 * spread out behind the head while another owner's task goes to it: claims alternate between the owners that wait,
 * and no owner holds another's task back by creating or waking tasks again and again. A task handed back (a released
 * run, a lapsed lease after a crash) keeps its place.
 */
export const FAIR_STEP = 0.001;
/**
 * The place: the greater of the head's place (or now) and the owner's last place plus FAIR_STEP (or 0). An owner with
 * a task waiting in line has a last place at or behind the head's, so the greater is then its last place plus the step,
 * and the head is looked for only when the owner has no task waiting (coalesce reads its arguments in order): the head
 * is found past every running task before it, where the owner's last place is mostly its newest task's.
 */
export const FAIR_PLACE = `coalesce(
  (SELECT fair_at FROM tasks INDEXED BY tasks_owner_fair
    WHERE runnable = 1 AND tenant = @tenant AND principal = @principal AND fair_at IS NOT NULL AND ${CLAIMABLE}
    ORDER BY fair_at DESC LIMIT 1) + ${FAIR_STEP},
  max(coalesce((SELECT fair_at FROM tasks INDEXED BY tasks_fair WHERE runnable = 1 AND fair_at IS NOT NULL
    AND ${CLAIMABLE} ORDER BY fair_at LIMIT 1), @now), 0))`;
/** The order of the line (tasks_fair): a place taken by an older process (no placed_at) first among its place. */
export const LINE_ORDER = `fair_at, placed_at, created_at`;
/**
 * Priorities (migration 23): when an owner's task is first in line, the claim takes that owner's waiting task of the
 * highest priority instead (tasks_owner_priority; among equals the first to take its place), and the task first in
 * line takes the claimed one's place. The owner's turns stay where they were; only which of its tasks takes each
 * turn changes.
 */
export const OWNER_PRIORITY_ORDER = `priority DESC, placed_at, fair_at, created_at`;

/**
 * A lease its run may renew: any but a lapsed one of a task that holds a slot of a concurrency key only while a run
 * holds its lease (hold 'run'): once lapsed, that slot counted as free and may have gone to another run.
 */
export const RENEWABLE = `(concurrency_key IS NULL OR concurrency_hold = 'task' OR lease_until >= @now)`;

/**
 * A waiting task whose time has come (its lease was released when it began to wait): the next claim gives it a new
 * place in line and makes it runnable (claims.ts, requeueWoken).
 */
export const DUE = `wake_at IS NOT NULL AND wake_at <= @now AND ${WORKING} AND (expires_at IS NULL OR expires_at > @now)`;
