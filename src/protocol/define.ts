// The registration API: tools, prompts, resources and templates as plain objects.
import type { StepOptions } from '../tasks/execution.js';
import type { HandlerContext } from './context.js';
import type {
  CallToolResult,
  GetPromptResult,
  Icon,
  JsonObject,
  ReadResourceResult,
  ResourceContents,
} from './types.js';

/** How a tool relates to the tasks extension. */
export interface TaskPolicy {
  /** `never`: always synchronous. `optional`: a task when the client declares the extension. `required`: only as a task. */
  support: 'never' | 'optional' | 'required';
  /** Default time to live in ms from creation; null for unlimited. */
  ttlMs?: number | null;
  /** Suggested polling interval in ms. */
  pollIntervalMs?: number;
  /** When false, a task interrupted by a crash ends `failed` instead of being replayed. Default true. */
  replayAfterCrash?: boolean;
  /** Payloads of this tool's tasks are encrypted at rest when the store has a key (even in `sensitive` mode). */
  sensitive?: boolean;
  /**
   * Runs synchronously on the tools/call itself, before the task exists: input it asks for (`ctx.input`) is
   * gathered with MRTR rounds, and the answers are handed to the task's handler.
   */
  prepare?: (args: JsonObject, ctx: HandlerContext) => void | Promise<void>;
  /**
   * How clients that do not declare the tasks extension call this tool (see docs/any-client.md): the call waits
   * up to a budget for the task, then hands back its id and the facade tools that follow it. `false` turns it
   * off. Unset: on for `optional` tools when the server's fallback is on; off for `required` ones, which answer
   * -32021 to such clients as the extension demands, unless `true` (or an object) opts in.
   */
  fallback?: boolean | { budgetMs?: number };
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * Defaults for `ctx.step` calls (a server-wide layer, a tool's layer, then the step's own options; later layers win,
 * retry policies field by field). The built-in default is one attempt and no timeout.
 */
export type StepDefaults = StepOptions;

export interface ToolDefinition<Args = JsonObject> {
  name: string;
  title?: string;
  description?: string;
  /** JSON Schema (2020-12 by default) for `arguments`; defaults to an empty object schema. */
  inputSchema?: JsonObject;
  outputSchema?: JsonObject;
  annotations?: ToolAnnotations;
  icons?: Icon[];
  _meta?: JsonObject;
  task?: TaskPolicy;
  /** Defaults for this tool's steps (retry policy, timeout of each attempt). */
  steps?: StepDefaults;
  /**
   * What callers see of an error the handler throws (a tool execution error, `isError: true`): its message
   * (`public`, the default) or a generic text with a reference (`private`). Operators see everything either way.
   */
  errors?: 'public' | 'private';
  handler: (args: Args, ctx: HandlerContext) => CallToolResult | Promise<CallToolResult>;
}

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}

export type Completer = (value: string, context: Record<string, string>) => string[] | Promise<string[]>;

export interface PromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: Icon[];
  /** Completion providers keyed by argument name. */
  complete?: Record<string, Completer>;
  handler: (args: Record<string, string>, ctx: HandlerContext) => GetPromptResult | Promise<GetPromptResult>;
}

export interface ResourceDefinition {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  icons?: Icon[];
  read: (
    ctx: HandlerContext,
  ) => ReadResourceResult | ResourceContents[] | Promise<ReadResourceResult | ResourceContents[]>;
}

export interface ResourceTemplateDefinition {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  icons?: Icon[];
  complete?: Record<string, Completer>;
  read: (
    uri: string,
    variables: Record<string, string>,
    ctx: HandlerContext,
  ) => ReadResourceResult | ResourceContents[] | Promise<ReadResourceResult | ResourceContents[]>;
}

/** A tool set: what a `--tools` module exports (as its default export or as named `tools`, `prompts`, …). */
export interface ToolSet {
  tools?: ToolDefinition<never>[];
  prompts?: PromptDefinition[];
  resources?: ResourceDefinition[];
  resourceTemplates?: ResourceTemplateDefinition[];
}

export const defineTool = <Args = JsonObject>(def: ToolDefinition<Args>): ToolDefinition<never> =>
  def as unknown as ToolDefinition<never>;
export const definePrompt = (def: PromptDefinition): PromptDefinition => def;
export const defineResource = (def: ResourceDefinition): ResourceDefinition => def;
export const defineResourceTemplate = (def: ResourceTemplateDefinition): ResourceTemplateDefinition => def;
export const defineToolSet = (set: ToolSet): ToolSet => set;
