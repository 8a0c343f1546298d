// The invariants of the gateway sections: what the store, the clients' tasks/get and the upstream's call log must
// show after gateway replicas and upstream processes were SIGKILLed under traffic (docs/gateway.md, "Delivery").

export const GATEWAY_INVARIANTS: Readonly<Record<string, string>> = {
  terminal:
    'no task lost: every task in the store, and every task a client was handed, is terminal within the bound, and the last tasks/get of its client shows the status the store holds',
  handles:
    'every task handle tools/call returned exists; one task per client idempotency key, none that no client asked for',
  keys: 'every call that reached the upstream carries _meta["dev.durable-mcp/idempotencyKey"] = "durable-mcp:<taskId>" of a task of that tool with those arguments',
  'idempotent-exact':
    'every task of the idempotent tool (slow_sum) completes with exactly the upstream result, sent at least once (again after a crash or a lost call, under the same key)',
  'at-most-once':
    "no task of the non-idempotent tool (send_payment) reaches the upstream twice: its key appears at most once in the upstream's log, and exactly once, with the exact result, when it completed",
  'unknown-outcomes':
    'every task that ended failed with data.outcome "unknown" (reported in the results) is a non-idempotent call, error -32603 "outcome unknown: …", with at most one upstream call',
  'no-unexplained-failure':
    'every task that did not complete ended "outcome unknown" (above) or "not_sent" (-32603, data.outcome "not_sent", no upstream call; counted apart); nothing else fails or is cancelled',
  'no-crash': 'no gateway or upstream process exits unless killed by the driver',
  kills:
    'the planned kills of gateway replicas, of the HTTP upstream and of stdio upstream children were made',
};
