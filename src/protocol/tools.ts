// tools/list and synchronous tools/call.
import { checkParamHeaders } from '../wire/param-headers.js';
import { invalidParams, ProtocolError } from '../wire/protocol-error.js';
import { ErrorCode } from '../wire/codes.js';
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import type { HandlerContext } from './context.js';
import { paginate } from './pagination.js';
import type { Registry, RegisteredTool } from './registry.js';
import { runRound, type RoundDeps } from './run-round.js';
import type { RequestScope } from './scope.js';
import type { CacheHints } from './cache-hints.js';
import type { CallToolResult } from './types.js';

export interface ToolCall {
  tool: RegisteredTool;
  args: JsonObject;
}

/** Resolves and validates a tools/call request up to the point where the handler would run. */
export function resolveToolCall(registry: Registry, params: JsonObject, scope: RequestScope): ToolCall {
  const name = params.name;
  if (typeof name !== 'string') throw invalidParams('Invalid params: tools/call requires a string name');
  const tool = registry.tools.get(name);
  if (tool === undefined) throw invalidParams(`Unknown tool: ${name}`);
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

/** Checks a handler's result (content array; structuredContent against outputSchema) and marks it complete. */
export function toolResult(tool: RegisteredTool, result: CallToolResult): JsonObject {
  if (!isJsonObject(result) || !Array.isArray(result.content)) {
    throw new ProtocolError(ErrorCode.InternalError, `Tool ${tool.def.name} returned an invalid result`);
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

export async function callToolSync(
  deps: RoundDeps,
  call: ToolCall,
  params: JsonObject,
  scope: RequestScope,
): Promise<JsonObject> {
  const outcome = await runRound(deps, params, scope, call.tool.def.name, call.args, (ctx: HandlerContext) =>
    call.tool.def.handler(call.args as never, ctx),
  );
  return outcome.kind === 'done' ? toolResult(call.tool, outcome.value) : outcome.result;
}

export function listTools(
  registry: Registry,
  params: JsonObject,
  pageSize: number,
  hints: CacheHints,
): JsonObject {
  const { page, nextCursor } = paginate([...registry.tools.values()], params.cursor, pageSize);
  const result: JsonObject = { resultType: 'complete', tools: page.map((t) => t.listing), ...hints };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  return result;
}
