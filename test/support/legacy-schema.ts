// Checks messages of the 2025-11-25 wire against the official 2025-11-25 schemas (the Zod schemas of
// @modelcontextprotocol/core), plus the rule that no 2026-07-28-only field leaks into a legacy answer.
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  EmptyResultSchema,
  GetTaskResultSchema,
  InitializeResultSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCResultResponseSchema,
  ListTasksResultSchema,
  ListToolsResultSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/core';

interface Parser {
  safeParse(value: unknown): { success: boolean; error?: { message: string } };
}

/** Result schema by request method (tools/call picks CreateTaskResult when the result is nested in `task`). */
const RESULTS: Readonly<Record<string, Parser>> = {
  initialize: InitializeResultSchema,
  ping: EmptyResultSchema,
  'tools/list': ListToolsResultSchema,
  'tools/call': CallToolResultSchema,
  'tasks/get': GetTaskResultSchema,
  'tasks/list': ListTasksResultSchema,
  'tasks/cancel': CancelTaskResultSchema,
  'tasks/result': CallToolResultSchema,
  'resources/subscribe': EmptyResultSchema,
};

const MODERN_ONLY = ['resultType', 'ttlMs', 'pollIntervalMs', 'cacheScope', 'inputRequests'];
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function check(parser: Parser, value: unknown, what: string): string[] {
  const parsed = parser.safeParse(value);
  return parsed.success ? [] : [`${what}: ${parsed.error?.message ?? 'invalid'}`];
}

/** Modern-only keys anywhere in a task object or a result's top level. */
function modernLeaks(result: Record<string, unknown>): string[] {
  const out: string[] = [];
  const scan = (obj: Record<string, unknown>, where: string): void => {
    for (const key of MODERN_ONLY) if (key in obj) out.push(`${where}.${key} is a 2026-07-28 field`);
  };
  scan(result, 'result');
  if (isObject(result.task)) scan(result.task, 'result.task');
  if (Array.isArray(result.tasks))
    result.tasks.forEach((t, i) => isObject(t) && scan(t, `result.tasks[${i}]`));
  return out;
}

/** Problems with one message the server sent in answer to `method` (empty when valid). */
export function validateLegacy(msg: unknown, method: string): string[] {
  if (!isObject(msg)) return ['not an object'];
  if ('error' in msg) return check(JSONRPCErrorResponseSchema, msg, 'error response');
  if ('result' in msg) {
    const errors = check(JSONRPCResultResponseSchema, msg, 'result response');
    const result = msg.result;
    if (!isObject(result)) return [...errors, 'result is not an object'];
    const parser = method === 'tools/call' && 'task' in result ? CreateTaskResultSchema : RESULTS[method];
    if (parser !== undefined) errors.push(...check(parser, result, `${method} result`));
    errors.push(...modernLeaks(result));
    return errors;
  }
  if (msg.method === 'elicitation/create') return check(ElicitRequestSchema, msg, 'elicitation request');
  if (msg.method === 'notifications/tasks/status') return check(TaskStatusNotificationSchema, msg, 'status');
  return [];
}
