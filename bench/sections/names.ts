// Names of the rows that other rows are compared with (a row's ratio and targets name the row they divide by).
import {
  PG_CONNECTIONS,
  PG_REPLICAS,
  PUSH_STREAMS,
  SCALE_SMALL,
  SLEEP_SMALL,
  CREATION_MIN_RATIO,
} from '../config.js';
import { fmtCount } from '../format.js';
import type { ThroughputTarget } from '../types.js';

export const ECHO = 'baseline echo';
export const PEER_LIST = 'peer SDK v2 tools/list';
export const PEER_CALL = 'peer SDK v2 tools/call echo';
export const PEER_DISCOVER = 'peer SDK v2 server/discover';
export const RAW_INSERT = 'raw better-sqlite3 insert (FULL sync)';
export const CREATION = 'ours task creation over HTTP';
/**
 * The controls of the keyed rows: the same requests, rebuilt for each request around a fresh value of the same
 * size, under a `_meta` key the server ignores. Rebuilding a request costs the load generator (on the same two
 * cores as the server) some 10 µs; the control pays it too, so the keyed row's ratio to it is what the key costs.
 */
export const REBUILT = 'ours task creation, each request rebuilt (no key)';
export const PG_REBUILT = 'ours pg task creation, each request rebuilt (no key), 1 replica';
export const GET_RTT = 'ours tasks/get round trip (sequential)';
export const PUSH_ROW = `ours push latency, ${PUSH_STREAMS} SSE subscribers`;
export const SCALE_SMALL_ROW = `ours tasks/get, ${fmtCount(SCALE_SMALL)} stored tasks (sequential)`;
export const OPS_SMALL_ROW = `ours operator task list, ${fmtCount(SCALE_SMALL)} stored tasks (sequential)`;
export const PG_OPS_SMALL_ROW = `ours pg operator task list, ${fmtCount(SCALE_SMALL)} stored tasks (sequential)`;
export const MEM_BASE_ROW = 'bare node:http open SSE stream';
export const WAKE_SMALL_ROW = `ours wake-up lateness, ${fmtCount(SLEEP_SMALL)} sleeping tasks`;
export const SLEEP_MEMORY_SMALL_ROW = `ours server memory, ${fmtCount(SLEEP_SMALL)} sleeping tasks`;
export const RAW_PG_INSERT = `raw pg insert (autocommit, ${PG_CONNECTIONS} connections)`;
/** The rate of commits that notify, one after another: the model's `n` (docs/scaling.md). */
export const RAW_PG_NOTIFY = `raw pg insert with NOTIFY (autocommit, ${PG_CONNECTIONS} connections)`;
export const RAW_PG_SELECT = `raw pg point select (${PG_CONNECTIONS} connections)`;
export const PG_CREATION = 'ours pg task creation, 1 replica';
export const PG_GET_RTT = 'ours pg tasks/get round trip (sequential), 1 replica';
export const PG_REPLICAS_SUFFIX = `${PG_REPLICAS} replicas`;
export const UPSTREAM_CALL = 'SDK v1 upstream tools/call echo, direct';
export const NO_WORKER_CREATION = 'ours task creation, no worker';
export const GATEWAY_NO_WORKER = 'gateway task creation, no worker';

/** Ours ≥ 5 × the peer's requests/s and ≥ 0.75 × the bare echo's (the rows that read and answer at once). */
export const READ_TARGETS: ThroughputTarget[] = [
  { vs: ECHO, min: 0.75 },
  { vs: PEER_LIST, min: 5 },
];

/** server/discover: ≥ 0.75 × the bare echo's requests/s and ≥ 5 × the peer's. */
export const DISCOVER_TARGETS: ThroughputTarget[] = [
  { vs: ECHO, min: 0.75 },
  { vs: PEER_DISCOVER, min: 5 },
];

/** The keyed and retry-backoff creation rows' target against the same creation without keys or waits. */
export const creationTarget = (vs: string): ThroughputTarget => ({ vs, min: CREATION_MIN_RATIO });
