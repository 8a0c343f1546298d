// Validates server→client JSON-RPC messages against the official MCP 2026-07-28 JSON schema (and the tasks
// extension schema), picking the most specific definition by the message's shape, method or error code.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;

const loadJson = (name: string): Json =>
  JSON.parse(readFileSync(new URL(`../fixtures/schema/${name}`, import.meta.url), 'utf8')) as Json;

/** Key under which the core schema (which has no `$id`) is registered. */
const CORE_ID = 'https://modelcontextprotocol.io/schema/2026-07-28/schema.json';

const core = loadJson('2026-07-28.schema.json');
const ext = loadJson('ext-tasks.schema.json');
const EXT_ID =
  typeof ext.$id === 'string' ? ext.$id : 'https://modelcontextprotocol.io/ext-tasks/schema.json';

export const coreDefinitions: readonly string[] = Object.keys(core.$defs as Json);
export const extDefinitions: readonly string[] = Object.keys(ext.$defs as Json);

const ajv = new Ajv2020({ strict: false, allErrors: true });
for (const format of ['byte', 'uri', 'uri-template', 'date-time', 'email', 'uri-reference']) {
  ajv.addFormat(format, true);
}
ajv.addSchema(core, CORE_ID);
ajv.addSchema(ext.$id === undefined ? { ...ext, $id: EXT_ID } : ext);

/** Error-code → definition of the whole error response. */
export const ERROR_RESPONSE_DEFS: Readonly<Record<number, string>> = {
  [-32020]: 'HeaderMismatchError',
  [-32021]: 'MissingRequiredClientCapabilityError',
  [-32022]: 'UnsupportedProtocolVersionError',
};

/** Error-code → definition of the `error` object alone. */
export const ERROR_OBJECT_DEFS: Readonly<Record<number, string>> = {
  [-32700]: 'ParseError',
  [-32600]: 'InvalidRequestError',
  [-32601]: 'MethodNotFoundError',
  [-32602]: 'InvalidParamsError',
  [-32603]: 'InternalError',
};

/** Request method → definition of its `result` (when `resultType` is not `input_required` / `task`). */
export const RESULT_DEFS: Readonly<Record<string, string>> = {
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'completion/complete': 'CompleteResult',
  'subscriptions/listen': 'SubscriptionsListenResult',
};

/** Tasks-extension method → definition of its result (in the extension schema). */
export const EXT_RESULT_DEFS: Readonly<Record<string, string>> = {
  'tasks/get': 'GetTaskResult',
  'tasks/update': 'UpdateTaskResult',
  'tasks/cancel': 'CancelTaskResult',
};

/** Server notification method → definition. */
export const NOTIFICATION_DEFS: Readonly<Record<string, string>> = {
  'notifications/cancelled': 'CancelledNotification',
  'notifications/progress': 'ProgressNotification',
  'notifications/message': 'LoggingMessageNotification',
  'notifications/resources/updated': 'ResourceUpdatedNotification',
  'notifications/resources/list_changed': 'ResourceListChangedNotification',
  'notifications/tools/list_changed': 'ToolListChangedNotification',
  'notifications/prompts/list_changed': 'PromptListChangedNotification',
  'notifications/subscriptions/acknowledged': 'SubscriptionsAcknowledgedNotification',
};

export const EXT_NOTIFICATION_DEFS: Readonly<Record<string, string>> = {
  'notifications/tasks': 'TaskStatusNotification',
};

/** Methods on which an `input_required` result is allowed (MRTR). */
const MRTR_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

const BASE_CORE_DEFS = [
  'JSONRPCErrorResponse',
  'JSONRPCResultResponse',
  'JSONRPCNotification',
  'InputRequiredResult',
  'Result',
];

// Fail loudly (at import time) when a definition name used above is not in the schema.
for (const name of [
  ...BASE_CORE_DEFS,
  ...Object.values(ERROR_RESPONSE_DEFS),
  ...Object.values(ERROR_OBJECT_DEFS),
  ...Object.values(RESULT_DEFS),
  ...Object.values(NOTIFICATION_DEFS),
]) {
  if (!coreDefinitions.includes(name))
    throw new Error(`schema.ts: ${name} is not a $defs entry of the core schema`);
}
for (const name of [
  ...Object.values(EXT_RESULT_DEFS),
  ...Object.values(EXT_NOTIFICATION_DEFS),
  'CreateTaskResult',
]) {
  if (!extDefinitions.includes(name))
    throw new Error(`schema.ts: ${name} is not a $defs entry of the tasks schema`);
}

const compiled = new Map<string, ValidateFunction>();

function validatorFor(def: string, schemaId: string = CORE_ID): ValidateFunction {
  const key = `${schemaId}#/$defs/${def}`;
  let fn = compiled.get(key);
  if (fn === undefined) {
    fn = ajv.compile({ $ref: key });
    compiled.set(key, fn);
  }
  return fn;
}

function formatErrors(def: string, errors: ErrorObject[] | null | undefined, where = ''): string[] {
  return (errors ?? []).slice(0, 10).map((e) => {
    const path = `${where}${e.instancePath}` || '/';
    const params = Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : '';
    return `${def}: ${path} ${e.message ?? 'invalid'}${params}`;
  });
}

/** Validates `value` against one `$defs` entry; returns readable errors (empty when valid). */
export function validateAgainst(
  def: string,
  value: unknown,
  where = '',
  schemaId: string = CORE_ID,
): string[] {
  const fn = validatorFor(def, schemaId);
  return fn(value) ? [] : formatErrors(def, fn.errors, where);
}

/** Own-property lookup (method names such as "constructor" must not hit Object.prototype). */
const own = <T>(map: Readonly<Record<string | number, T>>, key: string | number): T | undefined =>
  Object.hasOwn(map, key) ? map[key] : undefined;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ValidateOptions {
  /** The method of the request this message answers (or was streamed for); picks the result definition. */
  method?: string;
  /** Whether the request declared the tasks extension (allows `resultType: "task"`). */
  tasksNegotiated?: boolean;
}

/**
 * Validates one message the server sent. Returns a list of problems (empty = valid).
 *
 * - error response → `JSONRPCErrorResponse`, plus the code's own definition (`HeaderMismatchError`, …);
 * - result response → `JSONRPCResultResponse`, plus `<Method>Result` (or `InputRequiredResult` / `CreateTaskResult`);
 * - notification → its own definition when the schema has one, else `JSONRPCNotification`.
 *
 * A few rules the schema cannot express are checked too (reserved error codes, `resultType` values, MRTR only on
 * tools/call, prompts/get and resources/read, no server-initiated requests).
 */
export function validateMessage(msg: unknown, options: ValidateOptions | string = {}): string[] {
  const opts: ValidateOptions = typeof options === 'string' ? { method: options } : options;
  if (!isObject(msg)) return [`not a JSON object: ${JSON.stringify(msg)?.slice(0, 80)}`];
  if (msg.jsonrpc !== '2.0') return ['jsonrpc must be "2.0"'];

  if ('error' in msg) {
    const errors = validateAgainst('JSONRPCErrorResponse', msg);
    if ('result' in msg) errors.push('a response must not carry both result and error');
    if ('method' in msg) errors.push('a response must not carry a method');
    if (isObject(msg.error) && typeof msg.error.code === 'number') {
      const code = msg.error.code;
      const responseDef = own(ERROR_RESPONSE_DEFS, code);
      if (responseDef !== undefined) errors.push(...validateAgainst(responseDef, msg));
      const objectDef = own(ERROR_OBJECT_DEFS, code);
      if (objectDef !== undefined) errors.push(...validateAgainst(objectDef, msg.error, '/error'));
      if (code <= -32020 && code >= -32099 && responseDef === undefined) {
        errors.push(`error code ${code} is in the range reserved by the spec but not defined by it`);
      }
      if (code === -32002 || code === -32042) errors.push(`error code ${code} is retired in 2026-07-28`);
    }
    return errors;
  }

  if ('result' in msg) {
    const errors = validateAgainst('JSONRPCResultResponse', msg);
    if ('method' in msg) errors.push('a response must not carry a method');
    const result = msg.result;
    if (!isObject(result)) return errors;
    const resultType = result.resultType;
    if (resultType === 'input_required') {
      errors.push(...validateAgainst('InputRequiredResult', result, '/result'));
      if (!('inputRequests' in result) && !('requestState' in result)) {
        errors.push('InputRequiredResult: at least one of inputRequests and requestState must be present');
      }
      if ('ttlMs' in result || 'cacheScope' in result) {
        errors.push('InputRequiredResult: input_required results carry no cache hints');
      }
      if (opts.method !== undefined && !MRTR_METHODS.has(opts.method)) {
        errors.push(`InputRequiredResult is not allowed on ${opts.method}`);
      }
      return errors;
    }
    if (resultType === 'task') {
      if (opts.tasksNegotiated !== true) errors.push('resultType "task" without the tasks extension');
      if (opts.method !== undefined && opts.method !== 'tools/call') {
        errors.push(`CreateTaskResult is not allowed on ${opts.method}`);
      }
      errors.push(...validateAgainst('CreateTaskResult', result, '/result', EXT_ID));
      return errors;
    }
    if (resultType !== 'complete') errors.push(`unexpected resultType ${JSON.stringify(resultType)}`);
    if (opts.method !== undefined) {
      const def = own(RESULT_DEFS, opts.method);
      const extDef = own(EXT_RESULT_DEFS, opts.method);
      if (def !== undefined) errors.push(...validateAgainst(def, result, '/result'));
      else if (extDef !== undefined) errors.push(...validateAgainst(extDef, result, '/result', EXT_ID));
      else errors.push(...validateAgainst('Result', result, '/result'));
    }
    return errors;
  }

  if (typeof msg.method === 'string') {
    if ('id' in msg) return [`servers must not send JSON-RPC requests (got ${msg.method})`];
    const def = own(NOTIFICATION_DEFS, msg.method);
    if (def !== undefined) return validateAgainst(def, msg);
    const extDef = own(EXT_NOTIFICATION_DEFS, msg.method);
    if (extDef !== undefined) return validateAgainst(extDef, msg, '', EXT_ID);
    return validateAgainst('JSONRPCNotification', msg);
  }

  return ['not a JSON-RPC response or notification'];
}
