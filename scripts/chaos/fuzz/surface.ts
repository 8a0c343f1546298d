// The fuzzed surface of the fuzz section: the conformance surface of test/e2e/fuzz.test.ts plus the tasks
// extension and the chaos tools, with real and forged task ids, other HTTP methods and paths, and task calls.
import fc from 'fast-check';
import {
  CONFORMANCE_SURFACE,
  CORE_METHODS,
  fuzzArbitraries,
  PROTOTYPE_NAMES,
  TASK_METHODS,
  toolArgsArb,
  UNSERVED_METHODS,
  type FuzzArbitraries,
  type Json,
  type Surface,
} from '../../../test/support/fuzz-model.js';
import { TASKS_EXTENSION as TASKS_EXT } from '../../../test/support/protocol.js';
import { TASK_CAPS } from '../harness/paths.js';

/** A request with another HTTP method, path or Host header. */
export interface RawCase {
  method: string;
  path: string;
  host: string | undefined;
  body: string | undefined;
}

/** A task tool call, then a tasks/* (or listen) request on a real task id. */
export interface TaskCall {
  tool: string;
  args: unknown;
  method: string;
  responses: unknown;
  caps: unknown;
}

export interface ChaosArbitraries extends FuzzArbitraries {
  rawArb: fc.Arbitrary<RawCase>;
  taskCallArb: fc.Arbitrary<TaskCall>;
}

/** Tools of the tasks extension (conformance and chaos sets). */
const TASK_TOOLS = [
  'greet',
  'slow_compute',
  'failing_job',
  'protocol_error_job',
  'confirm_delete',
  'multi_input',
  'test_tool_with_task',
  'chaos_job',
  'chaos_load',
  // Results that cannot be serialized (test/fixtures/tools/unserializable-tools.mjs).
  'bad_bigint',
  'bad_cycle',
  'bad_getter',
  'bad_bigint_task',
  'bad_cycle_task',
  'bad_getter_task',
];

/** Plausible arguments of the task tools. */
const TASK_TOOL_ARGS: Readonly<Record<string, fc.Arbitrary<unknown>>> = {
  greet: fc.record({ name: fc.string({ maxLength: 12 }) }),
  slow_compute: fc.record(
    {
      seconds: fc.oneof(fc.constantFrom(0, 0.01, 0.05), fc.double({ min: -1, max: 1000 })),
      label: fc.string({ maxLength: 6 }),
    },
    { requiredKeys: ['seconds'] },
  ),
  confirm_delete: fc.record({ filename: fc.string({ maxLength: 10 }) }),
  chaos_job: fc.record(
    {
      steps: fc.integer({ min: -1, max: 9 }),
      inputs: fc.integer({ min: -1, max: 3 }),
      ms: fc.integer({ min: 0, max: 20 }),
    },
    { requiredKeys: [] },
  ),
  chaos_load: fc.record({ n: fc.oneof(fc.integer(), fc.string({ maxLength: 3 })) }, { requiredKeys: [] }),
};

/** Answers to the input requests of the task tools, and malformed ones. */
const TASK_INPUT_RESPONSES: readonly unknown[] = [
  { k0: { action: 'accept', content: { v: 'fuzz' } } },
  { k0: { action: 'accept', content: 'not an object' } },
  { go: { action: 'cancel' } },
  { confirm_delete: { action: 'accept', content: { confirm: true } } },
];

/** Real task ids, well-formed unknown ones, near misses and junk. */
function taskIdArb(taskIds: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...taskIds),
    fc
      .string({
        unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'),
        minLength: 32,
        maxLength: 32,
      })
      .map((s) => `task_${s}`),
    fc.string({ maxLength: 40 }),
    fc.constantFrom('', 'task_', `${taskIds[0]}x`, String(taskIds[0]).toUpperCase(), ...PROTOTYPE_NAMES),
  );
}

/** Params of tasks/get, tasks/cancel and tasks/update (undefined for other methods). */
function taskParams(
  method: string,
  taskId: fc.Arbitrary<string>,
  inputResponses: fc.Arbitrary<unknown>,
): fc.Arbitrary<Json> | undefined {
  const anyTaskId = fc.oneof(
    { weight: 4, arbitrary: taskId },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 1 }) },
  );
  switch (method) {
    case 'tasks/get':
    case 'tasks/cancel':
      return fc.record({ taskId: anyTaskId }, { requiredKeys: [] });
    case 'tasks/update':
      return fc.record(
        {
          taskId: anyTaskId,
          inputResponses: fc.oneof(
            { weight: 4, arbitrary: inputResponses },
            { weight: 1, arbitrary: fc.constant(undefined) },
          ),
        },
        { requiredKeys: [] },
      );
    default:
      return undefined;
  }
}

function chaosSurface(taskIds: readonly string[]): Surface {
  const base = CONFORMANCE_SURFACE;
  const taskId = taskIdArb(taskIds);
  return {
    tools: [...base.tools, ...TASK_TOOLS],
    busyTools: [...base.busyTools, 'chaos_job', 'slow_compute'],
    argsForTool: { ...base.argsForTool, ...TASK_TOOL_ARGS },
    methods: [...CORE_METHODS, ...TASK_METHODS],
    otherMethods: [...UNSERVED_METHODS, 'tasks/get '],
    inputResponses: [...base.inputResponses, ...TASK_INPUT_RESPONSES],
    validCaps: { ...base.validCaps, extensions: { [TASKS_EXT]: {} } },
    tasks: {
      taskIds,
      listenTaskIds: fc.oneof(
        fc.array(taskId, { maxLength: 3 }),
        fc.constant('x'),
        fc.array(fc.integer(), { maxLength: 2 }),
      ),
      params: (method: string, inputResponses: fc.Arbitrary<unknown>) =>
        taskParams(method, taskId, inputResponses),
    },
  };
}

/** Requests with other HTTP methods, paths and Host headers. */
function rawArb(validRequestArb: fc.Arbitrary<Json>): fc.Arbitrary<RawCase> {
  return fc.record({
    method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'POST', 'PROPFIND'),
    path: fc.oneof(
      fc.constantFrom(
        '/mcp',
        '/mcp/',
        '/MCP',
        '/',
        '/healthz',
        '/healthz?x=1',
        '/metrics',
        '/.well-known/oauth-protected-resource',
        '/mcp?x=%zz',
        '//mcp',
        '/mcp/../mcp',
      ),
      fc.string({ unit: fc.constantFrom(...'/abcmp?=&%.~-_0123456789'), maxLength: 20 }).map((s) => `/${s}`),
    ),
    host: fc.oneof(
      { weight: 6, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('evil.example', 'localhost', '127.0.0.1:1', '[::1]', '', 'a'.repeat(300)),
      },
    ),
    body: fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 60 }),
      validRequestArb.map((r) => JSON.stringify(r)),
    ),
  });
}

/** A task tool call to create a task, then a tasks/* (or listen) request on a real task id. */
function taskCallArb(inputResponsesArb: fc.Arbitrary<unknown>): fc.Arbitrary<TaskCall> {
  return fc.record({
    tool: fc.constantFrom(
      'chaos_job',
      'slow_compute',
      'confirm_delete',
      'multi_input',
      'failing_job',
      'protocol_error_job',
      'test_tool_with_task',
      'chaos_load',
    ),
    args: fc.oneof(
      fc.constantFrom({}, { seconds: 0.01 }, { steps: 1, ms: 1 }, { filename: 'f' }, { n: 1 }),
      toolArgsArb,
    ),
    method: fc.constantFrom('tasks/get', 'tasks/update', 'tasks/cancel', 'subscriptions/listen'),
    responses: inputResponsesArb,
    caps: fc.constantFrom(
      TASK_CAPS,
      { extensions: { [TASKS_EXT]: {} } },
      {},
      { extensions: { [TASKS_EXT]: true } },
    ),
  });
}

/** The generators of the fuzz section, given real task ids. */
export function buildArbitraries(taskIds: readonly string[]): ChaosArbitraries {
  const arbs = fuzzArbitraries(chaosSurface(taskIds));
  return {
    ...arbs,
    rawArb: rawArb(arbs.validRequestArb),
    taskCallArb: taskCallArb(arbs.inputResponsesArb),
  };
}
