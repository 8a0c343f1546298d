// Tasks described the way a call without the tasks extension hands them back, for the fallback's unit tests.
import { describeTask, resolveFallback } from '../../src/protocol/tasks/fallback.js';
import type { TaskSnapshot } from '../../src/tasks/task.js';
import type { JsonObject } from '../../src/wire/jsonrpc.js';

export const ID = 'task-0123456789abcdef';
const names = resolveFallback(undefined).names;

export const snapshot = (over: Partial<TaskSnapshot>): TaskSnapshot => ({
  id: ID,
  status: 'working',
  statusMessage: undefined,
  createdAt: 1_000,
  updatedAt: 2_000,
  ttlMs: 60_000,
  pollIntervalMs: 1_000,
  inputRequests: {},
  result: undefined,
  error: undefined,
  ...over,
});

/** The parts of a describeTask result the assertions read. */
export interface Described {
  content: { type: string; text?: string }[];
  structuredContent: JsonObject & { instructions: string };
  isError?: boolean;
  _meta: JsonObject;
}
export const described = (task: TaskSnapshot, budgetMs = 20_000, opening?: string): Described =>
  describeTask(task, names, budgetMs, opening) as unknown as Described;

export const elicitForm = (requestedSchema: JsonObject, message = 'Choose the options.'): JsonObject => ({
  method: 'elicitation/create',
  params: { mode: 'form', message, requestedSchema },
});
