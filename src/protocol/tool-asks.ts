// What a tool declares it may ask its caller (ToolDefinition.asks): checked at registration, against the client's
// capabilities when the tool is called (before any task or step), and against each input its handler then asks.
import { isJsonObject, type JsonObject } from '../wire/jsonrpc.js';
import type { ClientCapabilities } from '../wire/envelope.js';
import { missingCapability, type ProtocolError } from '../wire/protocol-error.js';
import { missingCapabilityFor } from './mrtr.js';
import type { ToolInputMethod } from './tool-types.js';
import type { InputRequest, InputRequests } from './types.js';

/** Every input a tool can declare, as an input request of that kind (the request missingCapabilityFor reads). */
const ASKS: Readonly<Record<ToolInputMethod, InputRequest>> = {
  'elicitation/create': { method: 'elicitation/create', params: { mode: 'form' } } as unknown as InputRequest,
  'elicitation/create:url': {
    method: 'elicitation/create',
    params: { mode: 'url' },
  } as unknown as InputRequest,
  'sampling/createMessage': { method: 'sampling/createMessage' } as unknown as InputRequest,
  'roots/list': { method: 'roots/list' } as unknown as InputRequest,
};

const isAsk = (value: unknown): value is ToolInputMethod =>
  typeof value === 'string' && Object.hasOwn(ASKS, value);

/** What is wrong with a tool's `asks` (undefined: nothing, or none declared). */
export function asksProblem(asks: unknown): string | undefined {
  if (asks === undefined) return undefined;
  if (!Array.isArray(asks)) return 'asks must be an array';
  const wrong = asks.find((a) => !isAsk(a));
  return wrong === undefined && asks.length === new Set(asks).size
    ? undefined
    : `asks must list each of ${Object.keys(ASKS).join(', ')} at most once (got ${JSON.stringify(wrong ?? asks)})`;
}

/** The declared input a request is (elicitation in url mode apart from form mode). */
function askOf(request: InputRequest): ToolInputMethod | undefined {
  const { method } = request as { method?: unknown };
  if (method !== 'elicitation/create') return isAsk(method) ? method : undefined;
  const params = (request as { params?: unknown }).params;
  return isJsonObject(params) && params.mode === 'url' ? 'elicitation/create:url' : 'elicitation/create';
}

/** Form mode alone is written `{}` (as the capability is); next to url mode, both are named. */
const namedModes = (v: JsonObject): JsonObject => (Object.keys(v).length === 0 ? { form: {} } : v);

/**
 * The client capabilities the declared inputs need that `caps` lacks, as `data.requiredCapabilities` names them
 * (undefined: none missing). Elicitation in both modes, both missing, is `{elicitation: {form: {}, url: {}}}`.
 */
export function missingForAsks(
  asks: readonly ToolInputMethod[] | undefined,
  caps: ClientCapabilities,
): JsonObject | undefined {
  const required: JsonObject = {};
  for (const ask of asks ?? []) {
    const missing = missingCapabilityFor(ASKS[ask], caps);
    if (missing === undefined) continue;
    for (const [name, value] of Object.entries(missing)) {
      const before = required[name];
      required[name] =
        isJsonObject(before) && isJsonObject(value)
          ? { ...namedModes(before), ...namedModes(value) }
          : (value as JsonObject);
    }
  }
  return Object.keys(required).length === 0 ? undefined : required;
}

/**
 * The refusal of a call of `tool` by a client that cannot answer what the tool declares it asks (-32021, naming the
 * capabilities in `data.requiredCapabilities`); undefined when nothing is missing.
 */
export function refusalForAsks(
  tool: { name: string; asks?: readonly ToolInputMethod[] },
  caps: ClientCapabilities,
): ProtocolError | undefined {
  const missing = missingForAsks(tool.asks, caps);
  if (missing === undefined) return undefined;
  const names = Object.keys(missing).join(' and ');
  return missingCapability(
    `Tool ${tool.name} may ask for input that needs the client capability ${names}: declare it`,
    missing,
  );
}

/**
 * Throws where a handler asks for input its tool does not declare (when it declares any): the declaration is what
 * callers are checked against, so it must say everything the handler asks.
 */
export function checkDeclared(asks: readonly ToolInputMethod[] | undefined, requests: InputRequests): void {
  if (asks === undefined) return;
  for (const [key, request] of Object.entries(requests)) {
    const ask = askOf(request);
    if (ask !== undefined && !asks.includes(ask)) {
      const declared = asks.length === 0 ? 'none' : asks.join(', ');
      throw new TypeError(
        `input request "${key}" asks for ${ask}, which the tool does not declare (asks: ${declared}): add it to ` +
          `the tool's asks`,
      );
    }
  }
}
