// The checker of the gateway sections, a pure function of what was gathered: the store's tasks, what each client was
// handed and read last through tasks/get, and every call the upstream received (its log, with the _meta the gateway
// sent). The oracles section runs it on synthetic histories with planted violations.
import type { Invariants } from '../harness/invariants.js';
import type { RpcAnswer } from '../harness/rpc.js';
import type { TaskRow } from '../crash/types.js';

/** The `_meta` key under which the gateway sends a task's key upstream (and clients send theirs to the gateway). */
export const IDEMPOTENCY_KEY = 'dev.durable-mcp/idempotencyKey';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** One line of the upstream's call log (UPSTREAM_CALLS of test/fixtures/gateway/upstream-v1.mjs). */
export interface UpstreamCall {
  tool: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | null;
  pid: number;
}

export type GatewayTool = 'slow_sum' | 'send_payment';

/** What a client did and saw of one call: its key, tool and arguments, the task it was handed, its last read. */
export interface GatewayRec {
  key: string;
  tool: GatewayTool;
  args: Record<string, unknown>;
  taskId?: string;
  /** Every task id the answers to its tools/call named (one, however often it asked). */
  seenIds: Set<string>;
  final?: RpcAnswer;
}

export interface GatewayHistory {
  tasks: TaskRow[];
  recs: GatewayRec[];
  calls: UpstreamCall[];
}

/** A task that ended "outcome unknown": reported in the section's results. */
export interface UnknownOutcome {
  taskId: string;
  /** How often its key reached the upstream (0 or 1). */
  calls: number;
  reason: string;
}

export interface GatewayFindings {
  tasks: number;
  byStatus: Record<string, number>;
  byTool: Record<string, number>;
  unknown: UnknownOutcome[];
  notSent: number;
  /** Idempotent tasks whose call reached the upstream more than once (sent again after a crash or a lost call). */
  resent: number;
  upstreamCalls: number;
  maxCallsPerTask: number;
}

interface ErrorShape {
  code?: unknown;
  message?: unknown;
  data?: { outcome?: unknown; tool?: unknown; reason?: unknown };
}

const parse = (text: string | null | undefined): unknown => {
  try {
    return text === null || text === undefined ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
};

const canonical = (o: Record<string, unknown>): string =>
  JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b))));

/** The result the upstream gives for these arguments (content and structured content). */
export function expectedResult(tool: string, args: Record<string, unknown>): object {
  if (tool === 'slow_sum') {
    const sum = Number(args.a) + Number(args.b);
    return { content: [{ type: 'text', text: String(sum) }], structuredContent: { sum } };
  }
  return { content: [{ type: 'text', text: `paid ${String(args.cents)} to ${String(args.to)}` }] };
}

const sameResult = (got: unknown, tool: string, args: Record<string, unknown>): boolean => {
  const r = got as { content?: unknown; structuredContent?: unknown; isError?: unknown } | undefined;
  const want = expectedResult(tool, args) as { content: unknown; structuredContent?: unknown };
  return (
    r !== undefined &&
    r.isError !== true &&
    JSON.stringify(r.content) === JSON.stringify(want.content) &&
    JSON.stringify(r.structuredContent) === JSON.stringify(want.structuredContent)
  );
};

/** No task lost, none twice: the store, the handles and the clients' last reads agree. */
function checkTasks(h: GatewayHistory, rows: Map<string, TaskRow>, inv: Invariants): void {
  const byKey = new Map(h.recs.map((r) => [r.key, r]));
  for (const row of rows.values()) {
    inv.expect(
      'terminal',
      TERMINAL.has(row.status),
      () => `task ${row.id} (${row.tool}) is still ${row.status}`,
    );
    const rec = byKey.get(row.idempotency_key ?? '');
    if (rec === undefined)
      inv.fail(
        'handles',
        `task ${row.id} (${row.tool}, key ${row.idempotency_key}) was asked for by no client`,
      );
    else
      inv.expect(
        'handles',
        rec.taskId === row.id,
        () => `task ${row.id}: a second task under key ${rec.key} (its client was handed ${rec.taskId})`,
      );
  }
  for (const rec of h.recs) {
    if (rec.taskId === undefined) {
      inv.fail('handles', `the client of key ${rec.key} (${rec.tool}) was never handed a task`);
      continue;
    }
    inv.expect(
      'handles',
      rec.seenIds.size <= 1,
      () => `key ${rec.key} was answered with ${[...rec.seenIds].join(', ')}`,
    );
    const row = rows.get(rec.taskId);
    if (row === undefined) {
      inv.fail('handles', `task ${rec.taskId} (handed for key ${rec.key}) is not in the store`);
      continue;
    }
    inv.expect(
      'terminal',
      rec.final !== undefined && rec.final.status === row.status,
      () =>
        `task ${rec.taskId}: its client last read ${rec.final?.status ?? 'no terminal status'}, the store holds ${row.status}`,
    );
  }
}

/** The calls the upstream received, by task; every one must name its task by key, with the task's tool and args. */
function callsByTask(h: GatewayHistory, rows: Map<string, TaskRow>, inv: Invariants): Map<string, number> {
  const counts = new Map<string, number>();
  for (const call of h.calls) {
    const key = call.meta?.[IDEMPOTENCY_KEY];
    const id =
      typeof key === 'string' && key.startsWith('durable-mcp:') ? key.slice('durable-mcp:'.length) : '';
    const row = rows.get(id);
    const args = row === undefined ? undefined : (parse(row.args) as Record<string, unknown> | undefined);
    const ok =
      row !== undefined &&
      row.tool === call.tool &&
      args !== undefined &&
      canonical(args) === canonical(call.args);
    inv.expect(
      'keys',
      ok,
      () =>
        `an upstream call of ${call.tool} ${JSON.stringify(call.args)} carries key ${String(key)}, naming ${row === undefined ? 'no task' : `task ${row.id} (${row.tool} ${row.args})`}`,
    );
    if (ok) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** A failed task: outcome unknown (reported), not sent (counted apart), or unexplained. */
function checkFailure(
  row: TaskRow,
  error: ErrorShape | undefined,
  calls: number,
  inv: Invariants,
  found: GatewayFindings,
): void {
  const outcome = error?.data?.outcome;
  const what = `task ${row.id} (${row.tool}) failed with ${JSON.stringify(error)}`;
  if (outcome === 'unknown') {
    found.unknown.push({ taskId: row.id, calls, reason: String(error?.data?.reason ?? '') });
    inv.expect(
      'unknown-outcomes',
      row.tool === 'send_payment' &&
        error?.code === -32603 &&
        /^outcome unknown: /.test(String(error.message)) &&
        calls <= 1,
      () => `${what}, ${calls} upstream calls`,
    );
    inv.ok('no-unexplained-failure');
    return;
  }
  if (outcome === 'not_sent') {
    found.notSent += 1;
    inv.expect(
      'no-unexplained-failure',
      error?.code === -32603 && calls === 0,
      () => `${what}, yet ${calls} upstream calls`,
    );
    return;
  }
  inv.fail('no-unexplained-failure', what);
}

/** Each task's end against the delivery rules of its tool. */
function checkOutcome(
  row: TaskRow,
  final: RpcAnswer | undefined,
  calls: number,
  inv: Invariants,
  found: GatewayFindings,
): void {
  const args = (parse(row.args) as Record<string, unknown> | undefined) ?? {};
  const result = final?.result ?? parse(row.result);
  const error = (final?.error ?? parse(row.error)) as ErrorShape | undefined;
  if (row.tool === 'slow_sum') {
    if (calls > 1) found.resent += 1;
    inv.expect(
      'idempotent-exact',
      row.status === 'completed' && calls >= 1 && sameResult(result, row.tool, args),
      () =>
        `task ${row.id} slow_sum ${row.args}: ${row.status}, ${calls} upstream calls, result ${JSON.stringify(result ?? error)}`,
    );
  } else {
    inv.expect(
      'at-most-once',
      calls <= 1,
      () => `task ${row.id} send_payment ${row.args}: ${calls} upstream calls`,
    );
    if (row.status === 'completed')
      inv.expect(
        'at-most-once',
        calls === 1 && sameResult(result, row.tool, args),
        () =>
          `task ${row.id} send_payment ${row.args} completed with ${calls} upstream calls, result ${JSON.stringify(result)}`,
      );
  }
  if (row.status === 'failed') checkFailure(row, error, calls, inv, found);
  else if (row.status === 'cancelled')
    inv.fail('no-unexplained-failure', `task ${row.id} was cancelled; no client cancels`);
  else if (row.status === 'completed') inv.ok('no-unexplained-failure');
}

/** Checks a gathered history against the invariants; returns what it found (the outcome-unknown tasks among it). */
export function checkGateway(h: GatewayHistory, inv: Invariants): GatewayFindings {
  const rows = new Map(h.tasks.map((t) => [t.id, t]));
  const found: GatewayFindings = {
    tasks: rows.size,
    byStatus: {},
    byTool: {},
    unknown: [],
    notSent: 0,
    resent: 0,
    upstreamCalls: h.calls.length,
    maxCallsPerTask: 0,
  };
  checkTasks(h, rows, inv);
  const counts = callsByTask(h, rows, inv);
  const finals = new Map(
    h.recs.flatMap((r) => (r.taskId === undefined ? [] : [[r.taskId, r.final] as const])),
  );
  for (const row of rows.values()) {
    found.byStatus[row.status] = (found.byStatus[row.status] ?? 0) + 1;
    found.byTool[row.tool] = (found.byTool[row.tool] ?? 0) + 1;
    const calls = counts.get(row.id) ?? 0;
    found.maxCallsPerTask = Math.max(found.maxCallsPerTask, calls);
    checkOutcome(row, finals.get(row.id), calls, inv, found);
  }
  return found;
}
