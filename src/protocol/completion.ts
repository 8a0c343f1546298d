// completion/complete for prompt arguments and resource template variables.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import { invalidParams } from '../wire/protocol-error.js';
import type { Completer } from './define.js';
import type { Registry } from './registry.js';

const MAX_VALUES = 100;

export async function complete(registry: Registry, params: JsonObject): Promise<JsonObject> {
  const ref = params.ref;
  const argument = params.argument;
  if (!isJsonObject(ref) || !isJsonObject(argument)) {
    throw invalidParams('Invalid params: completion/complete requires ref and argument');
  }
  if (typeof argument.name !== 'string' || typeof argument.value !== 'string') {
    throw invalidParams('Invalid params: argument needs string name and value');
  }
  let completers: Record<string, Completer> | undefined;
  if (ref.type === 'ref/prompt' && typeof ref.name === 'string') {
    const prompt = registry.prompts.get(ref.name);
    if (prompt === undefined) throw invalidParams(`Unknown prompt: ${ref.name}`);
    completers = prompt.complete;
  } else if (ref.type === 'ref/resource' && typeof ref.uri === 'string') {
    const template = registry.templates.get(ref.uri);
    if (template === undefined) throw invalidParams(`Unknown resource template: ${ref.uri}`);
    completers = template.complete;
  } else {
    throw invalidParams('Invalid params: ref must be a ref/prompt or ref/resource');
  }
  const context: Record<string, string> = {};
  const ctxArgs = isJsonObject(params.context) ? params.context.arguments : undefined;
  if (isJsonObject(ctxArgs)) {
    for (const [k, v] of Object.entries(ctxArgs)) if (typeof v === 'string') context[k] = v;
  }
  const completer =
    completers !== undefined && Object.hasOwn(completers, argument.name)
      ? completers[argument.name]
      : undefined;
  const all = completer === undefined ? [] : await completer(argument.value, context);
  const values = all.slice(0, MAX_VALUES);
  return {
    resultType: 'complete',
    completion: { values, total: all.length, hasMore: all.length > values.length },
  };
}
