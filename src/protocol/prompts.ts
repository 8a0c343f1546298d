// prompts/list and prompts/get.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { invalidParams } from '../wire/protocol-error.js';
import type { CacheHints } from './cache-hints.js';
import type { PromptDefinition } from './define.js';
import { paginate } from './pagination.js';
import type { Registry } from './registry.js';
import { runRound, type RoundDeps } from './run-round.js';
import type { RequestScope } from './scope.js';

function promptListing(p: PromptDefinition): JsonObject {
  const out: JsonObject = { name: p.name };
  if (p.title !== undefined) out.title = p.title;
  if (p.description !== undefined) out.description = p.description;
  if (p.arguments !== undefined) out.arguments = p.arguments;
  if (p.icons !== undefined) out.icons = p.icons;
  return out;
}

export function listPrompts(
  registry: Registry,
  params: JsonObject,
  pageSize: number,
  hints: CacheHints,
): JsonObject {
  const { page, nextCursor } = paginate([...registry.prompts.values()], params.cursor, pageSize);
  const result: JsonObject = { resultType: 'complete', prompts: page.map(promptListing), ...hints };
  if (nextCursor !== undefined) result.nextCursor = nextCursor;
  return result;
}

export async function getPrompt(
  deps: RoundDeps,
  registry: Registry,
  params: JsonObject,
  scope: RequestScope,
): Promise<JsonObject> {
  const name = params.name;
  if (typeof name !== 'string') throw invalidParams('Invalid params: prompts/get requires a string name');
  const prompt = registry.prompts.get(name);
  if (prompt === undefined) throw invalidParams(`Unknown prompt: ${name}`);
  const raw = params.arguments ?? {};
  if (!isJsonObject(raw)) throw invalidParams('Invalid params: arguments must be an object');
  const args: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string')
      throw invalidParams(`Invalid params: prompt argument ${key} must be a string`);
    args[key] = value;
  }
  for (const arg of prompt.arguments ?? []) {
    if (arg.required === true && args[arg.name] === undefined) {
      throw invalidParams(`Invalid params: missing required prompt argument ${arg.name}`);
    }
  }
  const outcome = await runRound(deps, params, scope, name, args, (ctx) => prompt.handler(args, ctx));
  if (outcome.kind === 'input_required') return outcome.result;
  return { resultType: 'complete', ...(outcome.value as unknown as JsonObject) };
}
