// Modern (2026-07-28) result shapes → the 2025-11-25 ones: no resultType, cache hints or serverInfo _meta.
import type { JsonObject } from '../wire/jsonrpc.js';
import { META_SERVER_INFO } from '../wire/meta-keys.js';

const MODERN_ONLY = new Set(['resultType', 'ttlMs', 'cacheScope']);

/** A copy without the modern-only fields (results may be shared, memoized objects: never mutate them). */
export function toLegacyResult(result: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key in result) {
    if (MODERN_ONLY.has(key)) continue;
    if (key === '_meta') {
      const meta = { ...(result._meta as JsonObject) };
      delete meta[META_SERVER_INFO];
      if (Object.keys(meta).length > 0) out._meta = meta;
      continue;
    }
    out[key] = result[key];
  }
  return out;
}

export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** A modern task (CreateTaskResult or DetailedTask fields) as the legacy Task object. */
export function toLegacyTask(modern: JsonObject): JsonObject {
  const task: JsonObject = {
    taskId: modern.taskId,
    status: legacyStatus(modern),
    createdAt: modern.createdAt,
    lastUpdatedAt: modern.lastUpdatedAt,
    ttl: modern.ttlMs ?? null,
  };
  if (typeof modern.statusMessage === 'string') task.statusMessage = modern.statusMessage;
  if (typeof modern.pollIntervalMs === 'number') task.pollInterval = modern.pollIntervalMs;
  return task;
}

/** 2025-11-25 reports a tool result with isError:true as a failed task. */
function legacyStatus(modern: JsonObject): unknown {
  const result = modern.result as JsonObject | undefined;
  return modern.status === 'completed' && result?.isError === true ? 'failed' : modern.status;
}
