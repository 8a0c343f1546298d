// Durable tools for clients without the tasks extension: a tools/call waits up to a budget for its task, then hands
// back an ordinary CallToolResult naming the task and the facade tools (status, respond, cancel) a model follows.
import type { TaskPolicy } from '../define.js';
import type { TaskSnapshot } from '../../tasks/task.js';
import { isJsonObject, type JsonObject } from '../../wire/jsonrpc.js';
import { META_BACKGROUND_TASK, META_SERVER_INFO } from '../../wire/meta-keys.js';
import { listedValues, placeholder, PLACEHOLDER_KEY } from '../input-answers.js';

export interface FallbackOptions {
  /** The server-wide switch (default true). Off: such clients get what the extension alone gives them. */
  enabled?: boolean;
  /** How long (ms) a call, and each facade call, waits for news of its task (default 20 000; 0: answer at once). */
  budgetMs?: number;
  /**
   * Hands back `required` tools too, instead of the -32021 the extension prescribes for clients that did not declare
   * it: a deliberate departure from the extension, for hosts that cannot declare it (default false).
   */
  required?: boolean;
  /** Prefix of the facade tools' names (default `task_`: task_status, task_respond, task_cancel). */
  toolPrefix?: string;
}

export interface FacadeNames {
  status: string;
  respond: string;
  cancel: string;
}

export interface Fallback {
  enabled: boolean;
  budgetMs: number;
  required: boolean;
  names: FacadeNames;
}

export const DEFAULT_FALLBACK_BUDGET_MS = 20_000;

export function resolveFallback(options: FallbackOptions | false | undefined): Fallback {
  const o = options === false ? { enabled: false } : (options ?? {});
  const budgetMs = o.budgetMs ?? DEFAULT_FALLBACK_BUDGET_MS;
  if (!Number.isSafeInteger(budgetMs) || budgetMs < 0) {
    throw new Error(`fallback budget must be a whole number of ms >= 0 (got ${String(budgetMs)})`);
  }
  const prefix = o.toolPrefix ?? 'task_';
  return {
    enabled: o.enabled ?? true,
    budgetMs,
    required: o.required ?? false,
    names: { status: `${prefix}status`, respond: `${prefix}respond`, cancel: `${prefix}cancel` },
  };
}

/** The budget of a tool's calls from clients without the extension; undefined when the fallback is off for it. */
export function toolBudget(policy: TaskPolicy | undefined, fallback: Fallback): number | undefined {
  if (!fallback.enabled || policy === undefined || policy.support === 'never') return undefined;
  const own = policy.fallback;
  if (own === false) return undefined;
  if (own === undefined && policy.support === 'required' && !fallback.required) return undefined;
  // A tool's own budget was checked when it was registered.
  return (typeof own === 'object' ? own.budgetMs : undefined) ?? fallback.budgetMs;
}

/** The structuredContent of a hand-back: what a tool with an outputSchema also admits for such clients. */
export const HANDLE_SCHEMA: JsonObject = {
  type: 'object',
  properties: {
    taskId: { type: 'string' },
    status: { type: 'string', enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
    statusMessage: { type: 'string' },
    inputRequests: { type: 'object' },
    next: { type: 'object' },
    instructions: { type: 'string' },
  },
  required: ['taskId', 'status', 'instructions'],
};

/** Keywords that stay at the widened schema's root: the dialect, the resource, its definitions, its labels. */
const ROOT_KEYWORDS = new Set([
  '$schema',
  '$id',
  '$defs',
  'definitions',
  '$anchor',
  '$dynamicAnchor',
  'title',
  'description',
]);

/** A reference into the original's own keywords, which now live under `anyOf/0`. */
function rebaseRef(ref: string): string {
  if (ref === '#') return '#/anyOf/0';
  if (!ref.startsWith('#/') || ref.startsWith('#/$defs/') || ref.startsWith('#/definitions/')) return ref;
  return `#/anyOf/0${ref.slice(1)}`;
}

/** The original's subschemas with their root-relative references rebased (embedded resources keep theirs). */
function rebase(node: unknown, top: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => rebase(n, false));
  if (!isJsonObject(node) || (!top && typeof node.$id === 'string')) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === '$ref' && typeof value === 'string' ? rebaseRef(value) : rebase(value, false);
  }
  return out;
}

/**
 * A tool's outputSchema widened to admit a hand-back, for the listing shown to clients without the extension: its
 * own keywords move under `anyOf/0` (references to them follow), the rest stays at the root.
 */
export function withHandle(schema: JsonObject): JsonObject {
  const rebased = rebase(schema, true) as JsonObject;
  const root: JsonObject = {};
  const own: JsonObject = {};
  for (const [key, value] of Object.entries(rebased)) (ROOT_KEYWORDS.has(key) ? root : own)[key] = value;
  return { ...root, type: 'object', anyOf: [own, HANDLE_SCHEMA] };
}

const json = (value: unknown): string => JSON.stringify(value);

/** A budget in words: "500 ms", "20 s", "1.5 s". */
export const duration = (ms: number): string => (ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`);

const BOUNDS: [string, string][] = [
  ['minimum', 'at least N'],
  ['maximum', 'at most N'],
  ['minLength', 'at least N characters'],
  ['maxLength', 'at most N characters'],
  ['minItems', 'at least N choices'],
  ['maxItems', 'at most N choices'],
];

/** A field's schema in words: type, choices, bounds, whether it is required, and its default as a suggestion. */
function describeField(name: string, field: unknown, required: boolean): string {
  const f = isJsonObject(field) ? field : {};
  const parts = [typeof f.type === 'string' ? f.type : 'value'];
  const listed = listedValues(f) ?? (isJsonObject(f.items) ? listedValues(f.items) : undefined);
  if (listed !== undefined)
    parts.push(`${f.type === 'array' ? 'any of' : 'one of'} ${listed.map(json).join(', ')}`);
  if (typeof f.format === 'string') parts.push(f.format);
  for (const [key, words] of BOUNDS) {
    if (typeof f[key] === 'number') parts.push(words.replace('N', String(f[key])));
  }
  parts.push(required ? 'required' : 'optional');
  if (f.default !== undefined) parts.push(`suggested default ${json(f.default)}, only if the user picks it`);
  const label =
    typeof f.title === 'string' ? f.title : typeof f.description === 'string' ? f.description : '';
  return `${name} (${parts.join(', ')})${label === '' ? '' : `: ${label}`}`;
}

/** Text that ends like a sentence. */
const sentence = (text: string): string => (text === '' || /[.?!:]$/.test(text) ? text : `${text}.`);

const CHOICE = 'the user\'s choice: "accept", "decline" or "cancel"';

/**
 * One input request in words, and the shape of its answer for task_respond with a placeholder wherever the user's
 * answer goes: sent as it is, it is refused (a placeholder answers nothing), so nothing is decided for the user.
 */
function describeRequest(request: JsonObject): { text: string; shape: JsonObject } {
  const params = isJsonObject(request.params) ? request.params : {};
  const message = typeof params.message === 'string' ? params.message : '';
  switch (request.method) {
    case 'elicitation/create': {
      if (params.mode === 'url') {
        const url = typeof params.url === 'string' ? params.url : '';
        return {
          text: `${sentence(message)} The user must open ${url} and finish there.`,
          shape: { action: placeholder(`${CHOICE} ("accept" only once they finished at ${url})`) },
        };
      }
      const schema = isJsonObject(params.requestedSchema) ? params.requestedSchema : {};
      const properties = isJsonObject(schema.properties) ? schema.properties : {};
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      const names = Object.keys(properties);
      const fields = names.map((n) => describeField(n, properties[n], required.has(n)));
      const content = Object.fromEntries(
        names.map((n, i) => [n, placeholder(`the user's answer: ${fields[i] as string}`)]),
      );
      return {
        text: [sentence(message), fields.length > 0 ? `Fields: ${fields.join('; ')}.` : '']
          .filter((t) => t !== '')
          .join(' '),
        shape: { action: placeholder(CHOICE), content },
      };
    }
    case 'sampling/createMessage':
      return {
        text: `A language model completion is requested, if the user allows it: ${json(params.messages ?? [])}.`,
        shape: {
          role: 'assistant',
          content: { type: 'text', text: placeholder('the completion, once the user allowed the request') },
          model: placeholder('the name of the model that wrote the completion'),
        },
      };
    case 'roots/list':
      return {
        text: 'The task asks for the root directories it may use, as the user allows.',
        shape: {
          roots: placeholder(
            'the directories the user agrees to share: [{"uri":"file:///…","name":"…"}], or []',
          ),
        },
      };
    default:
      return { text: `A ${String(request.method)} request: ${json(params)}.`, shape: {} };
  }
}

/** The tool's result without what this server adds to every answer (its resultType and serverInfo). */
function ownResult(result: JsonObject): JsonObject {
  const { resultType: _kind, _meta: meta, ...own } = result;
  if (isJsonObject(meta)) {
    const { [META_SERVER_INFO]: _info, ...rest } = meta;
    if (Object.keys(rest).length > 0) own._meta = rest;
  }
  return own;
}

/**
 * The task as a CallToolResult for a model: what it is doing, the questions it waits on (each with an answer of the
 * right shape), and which facade tool to call next; the tool's own result once it completed.
 */
export function describeTask(
  task: TaskSnapshot,
  names: FacadeNames,
  budgetMs: number,
  opening = '',
): JsonObject {
  const id = task.id;
  const ref = json({ taskId: id });
  const lines: string[] = opening === '' ? [] : [opening];
  const structured: JsonObject = { taskId: id, status: task.status };
  if (task.statusMessage !== undefined) structured.statusMessage = task.statusMessage;
  let next: JsonObject | undefined;
  let content: JsonObject[] = [];
  let isError = false;
  const waits = budgetMs > 0 ? ` (it waits up to ${duration(budgetMs)} for news)` : '';
  switch (task.status) {
    case 'working': {
      const doing = task.statusMessage === undefined ? '' : ` Status: ${task.statusMessage}`;
      lines.push(`Task ${id} is still running on the server; nothing is lost while you wait.${doing}`);
      lines.push(`To get its result, call ${names.status} with ${ref}${waits}.`);
      lines.push(`To stop it, call ${names.cancel} with ${ref}.`);
      next = { tool: names.status, arguments: { taskId: id } };
      break;
    }
    case 'input_required': {
      lines.push(`Task ${id} is waiting for answers before it can go on.`);
      const answers: JsonObject = {};
      for (const [key, request] of Object.entries(task.inputRequests)) {
        const { text, shape } = describeRequest(request);
        lines.push(`- "${key}": ${text}`);
        answers[key] = shape;
      }
      const args = { taskId: id, inputResponses: answers };
      lines.push(
        `Ask the user; do not answer for them. Then call ${names.respond} with ${json(args)}, each ` +
          `{"${PLACEHOLDER_KEY}":…} replaced by what the user answered (leave out optional fields they leave ` +
          `empty; for a question the user declines, answer {"action":"decline"}). The placeholders are not ` +
          `answers: sent as they are, the call is refused.`,
      );
      lines.push(`To stop the task instead, call ${names.cancel} with ${ref}.`);
      structured.inputRequests = task.inputRequests;
      next = { tool: names.respond, arguments: args };
      break;
    }
    case 'completed': {
      const result = task.result ?? {};
      isError = result.isError === true;
      lines.push(isError ? `Task ${id} ended with an error:` : `Task ${id} completed. Its result:`);
      content = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
      structured.result = ownResult(result);
      break;
    }
    case 'failed': {
      const error = task.error;
      isError = true;
      lines.push(`Task ${id} failed: ${error?.message ?? 'unknown error'}.`);
      if (error !== undefined) structured.error = error as unknown as JsonObject;
      break;
    }
    case 'cancelled':
      lines.push(`Task ${id} was cancelled; it will not finish.`);
      break;
  }
  const instructions = lines.join('\n');
  structured.instructions = instructions;
  if (next !== undefined) structured.next = next;
  const out: JsonObject = {
    content: [{ type: 'text', text: instructions }, ...content],
    structuredContent: structured,
    _meta: { [META_BACKGROUND_TASK]: { taskId: id, status: task.status } },
  };
  if (isError) out.isError = true;
  return out;
}
