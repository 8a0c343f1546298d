// The invariants of the crash sections and of the clock sections (the same checks, with jumps instead of kills).
import { DURABLE_INVARIANTS } from './durable.js';

export const CRASH_INVARIANTS: Readonly<Record<string, string>> = {
  terminal:
    'every task reaches exactly one terminal state (completed, or cancelled when a cancel was sent); every later read returns the same snapshot',
  memo: 'a memoized step whose completion was committed never runs again (a failed attempt is no commit: its retry is not a re-run)',
  'single-holder':
    'no two runs held a task at once: no run committed after a newer run had claimed the task, the run whose result was stored is the last one that started, and the stored steps are the chain the result saw',
  answers: 'no answer acknowledged by tasks/update is lost or altered',
  handles: 'every task handle returned by tools/call exists; no tools/call created two tasks',
  stuck:
    'nothing stuck: all tasks terminal (none left working in a retry backoff or a sleep) within lease + work + waits + slack after the last kill; TTL probes failed as expired within TTL + sweep',
  'no-crash': 'no server process exits unless killed by the driver',
  kills: 'the planned number of kills was reached within the time bound',
  ...DURABLE_INVARIANTS,
};

// The clock section: the same processes, clients and checks, with wall-clock jumps of the processes instead of kills
// (and without retries, sleeps or idempotency keys: their times are only comparable on one clock).
export const CLOCK_INVARIANTS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    Object.entries(CRASH_INVARIANTS).filter(([name]) => name !== 'kills' && !(name in DURABLE_INVARIANTS)),
  ),
  stuck:
    'nothing stuck: all tasks terminal within lease + work + slack after the last jump; TTL probes failed as expired within TTL + sweep + the largest clock offset',
  'no-spurious-expiry':
    "no task expires that the jumps did not make expire (every jump stays well inside the tasks' one-hour TTL)",
  jumps: 'the planned number of clock jumps was made within the time bound',
};
