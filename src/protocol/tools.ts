// tools/list and synchronous tools/call.
import { checkParamHeaders } from '../wire/param-headers.js';
import { invalidParams, ProtocolError } from '../wire/protocol-error.js';
import { ErrorCode } from '../wire/codes.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import type { HandlerContext } from './tool-types.js';
import { paginate } from './pagination.js';
import type { Registry, RegisteredTool } from './registry.js';
import { runRound, type RoundDeps } from './run-round.js';
import type { RequestScope } from './scope.js';
import type { CacheHints } from './cache-hints.js';
import type { CallToolResult } from './types.js';
import type { StepDefaults } from './define.js';
import { mergeStepOptions } from '../tasks/execution.js';
import type { TaskFailure } from '../tasks/task.js';
import { refusalForAsks } from './tool-asks.js';
import { describeFailure, isToolExecutionError, toolErrorResult } from './tool-errors.js';

export interface ToolCall {
  tool: RegisteredTool;
  args: JsonObject;
}

/** Resolves and validates a tools/call request up to the point where the handler would run. */
export function resolveToolCall(
  registry: Registry,
  params: JsonObject,
  scope: RequestScope,
  unknownTool?: (name: string) => Error | undefined,
): ToolCall {
  const name = params.name;
  if (typeof name !== 'string') throw invalidParams('Invalid params: tools/call requires a string name');
  const tool = registry.tools.get(name);
  if (tool === undefined) throw unknownTool?.(name) ?? invalidParams(`Unknown tool: ${name}`);
  const rawArgs = params.arguments ?? {};
  if (!isJsonObject(rawArgs)) throw invalidParams('Invalid params: arguments must be an object');
  if (scope.header !== undefined && tool.paramHeaders.length > 0) {
    const mismatch = checkParamHeaders(scope.header, tool.paramHeaders, rawArgs);
    if (mismatch !== undefined) throw mismatch;
  }
  const valid = tool.validate(rawArgs);
  if (!valid.ok) throw invalidParams(`Invalid arguments for tool ${name}: ${valid.reason}`);
  return { tool, args: rawArgs };
}

/** Names what a handler returned, in a few words and without its content. */
function whatItIs(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object without a content array';
  return `a ${typeof value}`;
}

/** Checks a handler's result (content array; structuredContent against outputSchema) and marks it complete. */
export function toolResult(tool: RegisteredTool, result: CallToolResult): JsonObject {
  if (!isJsonObject(result) || !Array.isArray(result.content)) {
    throw new ProtocolError(
      ErrorCode.InternalError,
      `Tool ${tool.def.name} returned ${whatItIs(result)} instead of a result: a handler returns ` +
        `{ content: [...] }, e.g. textResult('…')`,
    );
  }
  if (tool.validateOutput !== undefined && result.isError !== true) {
    const checked = tool.validateOutput(result.structuredContent);
    if (!checked.ok) {
      throw new ProtocolError(
        ErrorCode.InternalError,
        `Tool ${tool.def.name} broke its outputSchema: ${checked.reason}`,
      );
    }
  }
  return { resultType: 'complete', ...(result as unknown as JsonObject) };
}

/** The step defaults of a tool's handler: the server's, then the tool's own. */
export const toolStepDefaults = (deps: RoundDeps, tool: RegisteredTool): StepDefaults =>
  mergeStepOptions(deps.steps, tool.def.steps);

export async function callToolSync(
  deps: RoundDeps,
  call: ToolCall,
  params: JsonObject,
  scope: RequestScope,
): Promise<JsonObject> {
  const { def } = call.tool;
  // Refused before anything runs: the handler could ask for input this client cannot answer.
  const refusal = refusalForAsks(def, scope.envelope.clientCapabilities);
  if (refusal !== undefined) throw refusal;
  let failure: TaskFailure | undefined;
  const outcome = await runRound(
    deps,
    params,
    scope,
    def.name,
    call.args,
    async (ctx: HandlerContext): Promise<CallToolResult | undefined> => {
      try {
        return await def.handler(call.args as never, ctx);
      } catch (err) {
        if (!isToolExecutionError(err)) throw err;
        failure = describeFailure(err, deps.now());
        return undefined;
      }
    },
    toolStepDefaults(deps, call.tool),
    def.asks,
  );
  if (outcome.kind === 'input_required') return outcome.result;
  if (failure !== undefined) {
    deps.onToolError?.({ taskId: undefined, tool: def.name, failure });
    return toolErrorResult(failure, def.errors);
  }
  return toolResult(call.tool, outcome.value as CallToolResult);
}

/** One page of tools/list: every registered tool, or what `view` shows of them. */
export function listTools(
  registry: Registry,
  params: JsonObject,
  pageSize: number,
  hints: CacheHints,
  view?: { list(tools: RegisteredTool[]): JsonObject[] },
): JsonObject {
  const tools = [...registry.tools.values()];
  const listings = view === undefined ? tools.map((t) => t.listing) : view.list(tools);
  const { page, nextCursor } = paginate(listings, params.cursor, pageSize);
  const result: JsonObject = { resultType: 'complete', tools: page, ...hints };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  return result;
}
