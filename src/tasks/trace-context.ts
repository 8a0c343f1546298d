// The W3C trace context a task keeps (NewTask.trace): taken from a request's `_meta` or its span, checked strictly.

/** A W3C `traceparent` (version 00) and its `tracestate`, as a task keeps them for the spans of its runs. */
export interface TraceContext {
  /** `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, both ids non-zero, lower case. */
  traceParent: string;
  /** The vendors' `tracestate` list (at most TRACE_STATE_MAX characters), if one came with it. */
  traceState?: string;
}

/** The `_meta` keys of a request that carry its trace context (as in the OpenTelemetry MCP conventions). */
export const META_TRACEPARENT = 'traceparent';
export const META_TRACESTATE = 'tracestate';

/** The longest `tracestate` kept (W3C: a list a vendor may truncate at 512 characters). */
export const TRACE_STATE_MAX = 512;

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
// One list member: a key (simple or tenant@system) and a value of printable ASCII but `,` and `=`, no trailing space.
const STATE_MEMBER =
  /^(?:[a-z][a-z0-9_*/-]{0,255}|[a-z0-9][a-z0-9_*/-]{0,240}@[a-z][a-z0-9_*/-]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const ZEROS = /^0+$/;

/** The trace id of a valid `traceparent`, or undefined. Only version 00, non-zero ids (W3C Trace Context). */
export function traceIdOf(traceParent: unknown): string | undefined {
  if (typeof traceParent !== 'string') return undefined;
  const m = TRACE_PARENT.exec(traceParent);
  if (m === null) return undefined;
  const [, traceId = '', parentId = ''] = m;
  return ZEROS.test(traceId) || ZEROS.test(parentId) ? undefined : traceId;
}

/** A `tracestate` kept as it came when every member is well formed (at most 32, TRACE_STATE_MAX characters). */
function checkedState(state: unknown): string | undefined {
  if (typeof state !== 'string' || state.length === 0 || state.length > TRACE_STATE_MAX) return undefined;
  const members = state
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  if (members.length > 32) return undefined;
  return members.every((m) => STATE_MEMBER.test(m)) ? state : undefined;
}

/** A trace context from its two strings: undefined when the `traceparent` is not valid; a bad `tracestate` is left out. */
export function toTraceContext(traceParent: unknown, traceState?: unknown): TraceContext | undefined {
  if (traceIdOf(traceParent) === undefined) return undefined;
  const state = checkedState(traceState);
  return state === undefined
    ? { traceParent: traceParent as string }
    : { traceParent: traceParent as string, traceState: state };
}

/** The trace context a request's `_meta` carries (META_TRACEPARENT, META_TRACESTATE); anything invalid is ignored. */
export function traceContextOfMeta(meta: unknown): TraceContext | undefined {
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
  const fields = meta as Record<string, unknown>;
  return toTraceContext(fields[META_TRACEPARENT], fields[META_TRACESTATE]);
}
