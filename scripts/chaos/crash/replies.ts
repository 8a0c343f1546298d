// How the crash clients read replies: which errors they may simply retry, and how a reply is printed.
import type { RpcResult } from '../harness/rpc.js';

export const show = (r: RpcResult): string =>
  r.netError !== undefined
    ? `network error ${r.netError}`
    : r.error !== undefined
      ? `HTTP ${r.status} error ${r.error.code} ${r.error.message}`
      : r.badBody !== undefined
        ? `HTTP ${r.status} body ${r.badBody.slice(0, 120)}`
        : `HTTP ${r.status} ${JSON.stringify(r.result).slice(0, 200)}`;

/**
 * Answers a client may simply retry while processes are killed: no connection, a cut body, or -32603 "Task store
 * unavailable" (HTTP 500). Any other error is a finding.
 */
export const transient = (r: RpcResult): boolean =>
  r.netError !== undefined ||
  r.badBody !== undefined ||
  (r.status === 500 && r.error?.code === -32603 && /^Task store unavailable: /.test(String(r.error.message)));

/** The key under which a transient reply is counted. */
export const transientKey = (r: RpcResult): string =>
  r.netError !== undefined
    ? r.netError
    : r.badBody !== undefined
      ? 'cut body'
      : `${r.error?.code} ${String(r.error?.message).slice(0, 60)}`;

/** A task snapshot without its `_meta`, to compare two reads. */
export const strip = (t: unknown): string => JSON.stringify({ ...(t as object), _meta: undefined });
