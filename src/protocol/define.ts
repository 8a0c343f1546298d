// The registration API: tools, prompts, resources and templates as plain objects.
import type { Completer, HandlerContext, PromptDefinition, ToolDefinition } from './tool-types.js';
import type { Icon, JsonObject, ReadResourceResult, ResourceContents } from './types.js';

export type {
  Completer,
  PromptArgument,
  PromptDefinition,
  StepDefaults,
  TaskPolicy,
  ToolAnnotations,
  ToolDefinition,
  ToolInputMethod,
} from './tool-types.js';

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
