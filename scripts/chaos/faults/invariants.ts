// The invariants of the fault-injection sections.

export const FAULT_INVARIANTS: Readonly<Record<string, string>> = {
  'clear-errors':
    'while the store is away, failing requests answer -32603 "Task store unavailable: <reason>" (HTTP 500), nothing vaguer',
  'no-phantom-handle':
    'every task handle tools/call returned is in the store (none returned for a failed commit)',
  'bounded-wait':
    'every request sent while the store is away is answered (error or not) within the wait bound (about two busy or connect timeouts), not only once the store is back',
  recovers: 'after each fault a create, get and update succeed again within the bound, without a restart',
  durable: 'every task whose handle was returned ends completed: a store outage does not fail accepted tasks',
  responsive:
    'tools/list and /healthz keep answering while the store is away (with PostgreSQL, within 5 s: they do not touch the store)',
  'no-crash': 'the server process never exits',
};

export const FULL_INVARIANTS: Readonly<Record<string, string>> = {
  ...FAULT_INVARIANTS,
  effective: 'the full disk was felt: writes while it was full answered -32603 SQLITE_FULL',
};
