// Holds the registered tools, prompts and resources; emits list-changed events when they change.
import { EventEmitter } from 'node:events';
import { collectParamHeaders, type ParamHeader } from '../wire/param-headers.js';
import type {
  PromptDefinition,
  ResourceDefinition,
  ResourceTemplateDefinition,
  ToolDefinition,
  ToolSet,
} from './define.js';
import type { ServerControl } from './tool-types.js';
import { compileSchema, type ArgumentValidator } from './schema-validation.js';
import { policyProblem } from '../tasks/concurrency.js';
import { debouncePolicyProblem } from '../tasks/debounce.js';
import { priorityProblem } from '../tasks/priority.js';
import { ratePolicyProblem } from '../tasks/rate-limit.js';
import type { JsonObject } from './types.js';
import { stepOptionsProblem } from '../tasks/execution.js';
import { asksProblem } from './tool-asks.js';

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** A tool's version, as each of its tasks records it. */
const VERSION = /^[A-Za-z0-9_.+-]{1,64}$/;

export interface RegisteredTool {
  def: ToolDefinition<never>;
  /** The tool exactly as `tools/list` shows it. */
  listing: JsonObject;
  paramHeaders: ParamHeader[];
  validate: ArgumentValidator;
  /** Checks structuredContent against outputSchema, when the tool declares one. */
  validateOutput: ArgumentValidator | undefined;
}

export type RegistryEvent =
  'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged' | 'resourceUpdated';

export class Registry {
  readonly tools = new Map<string, RegisteredTool>();
  readonly prompts = new Map<string, PromptDefinition>();
  readonly resources = new Map<string, ResourceDefinition>();
  readonly templates = new Map<string, ResourceTemplateDefinition>();
  readonly events = new EventEmitter();
  /** Bumped on every change of a list, so cached list results can be invalidated. */
  version = 0;

  constructor(sets: ToolSet[] = []) {
    this.events.setMaxListeners(0);
    for (const e of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'] as const) {
      this.events.on(e, () => void this.version++);
    }
    for (const set of sets) this.addSet(set);
  }

  addSet(set: ToolSet): void {
    for (const tool of set.tools ?? []) this.addTool(tool, false);
    for (const prompt of set.prompts ?? []) this.addPrompt(prompt, false);
    for (const resource of set.resources ?? []) this.addResource(resource, false);
    for (const template of set.resourceTemplates ?? []) this.addTemplate(template, false);
  }

  addTool(def: ToolDefinition<never>, notify = true): void {
    if (!TOOL_NAME.test(def.name)) throw new Error(`invalid tool name "${def.name}"`);
    if (this.tools.has(def.name)) throw new Error(`tool "${def.name}" is registered twice`);
    for (const version of [def.version, ...(def.compatibleVersions ?? [])])
      if (version !== undefined && !VERSION.test(version))
        throw new Error(
          `tool "${def.name}": versions must be 1 to 64 characters of letters, digits and ._+-`,
        );
    const problem = def.steps === undefined ? undefined : stepOptionsProblem(def.steps);
    if (problem !== undefined) throw new Error(`tool "${def.name}": steps.${problem}`);
    const asks = asksProblem(def.asks);
    if (asks !== undefined) throw new Error(`tool "${def.name}": ${asks}`);
    const fallback = def.task?.fallback;
    const budget = typeof fallback === 'object' ? fallback.budgetMs : undefined;
    if (budget !== undefined && (!Number.isSafeInteger(budget) || budget < 0)) {
      throw new Error(`tool "${def.name}": task.fallback.budgetMs must be a whole number of ms >= 0`);
    }
    const limited = def.task?.concurrency;
    const limitProblem = limited && policyProblem(def.name, limited);
    if (limitProblem !== undefined) throw new Error(`tool "${def.name}": task.concurrency: ${limitProblem}`);
    const rate = def.task?.rateLimit;
    const rateProblem = rate && ratePolicyProblem(def.name, rate);
    if (rateProblem !== undefined) throw new Error(`tool "${def.name}": task.rateLimit: ${rateProblem}`);
    const priority = def.task?.priority;
    const rank =
      typeof priority === 'function' || priority === undefined ? undefined : priorityProblem(priority);
    if (rank !== undefined) throw new Error(`tool "${def.name}": task.priority ${rank}`);
    const debounce = def.task?.debounce;
    const window = debounce && debouncePolicyProblem(debounce);
    if (window !== undefined) throw new Error(`tool "${def.name}": task.debounce: ${window}`);
    const inputSchema = def.inputSchema ?? { type: 'object' };
    const listing: JsonObject = { name: def.name };
    if (def.title !== undefined) listing.title = def.title;
    if (def.description !== undefined) listing.description = def.description;
    listing.inputSchema = inputSchema;
    if (def.outputSchema !== undefined) listing.outputSchema = def.outputSchema;
    if (def.annotations !== undefined) listing.annotations = def.annotations;
    if (def.icons !== undefined) listing.icons = def.icons;
    if (def._meta !== undefined) listing._meta = def._meta;
    this.tools.set(def.name, {
      def,
      listing,
      paramHeaders: collectParamHeaders(inputSchema),
      validate: compileSchema(inputSchema),
      validateOutput:
        def.outputSchema === undefined ? undefined : compileSchema(def.outputSchema, 'structuredContent'),
    });
    this.version++;
    if (notify) this.events.emit('toolsListChanged');
  }

  removeTool(name: string): boolean {
    const removed = this.tools.delete(name);
    if (removed) this.events.emit('toolsListChanged');
    return removed;
  }

  addPrompt(def: PromptDefinition, notify = true): void {
    if (this.prompts.has(def.name)) throw new Error(`prompt "${def.name}" is registered twice`);
    this.prompts.set(def.name, def);
    if (notify) this.events.emit('promptsListChanged');
  }

  removePrompt(name: string): boolean {
    const removed = this.prompts.delete(name);
    if (removed) this.events.emit('promptsListChanged');
    return removed;
  }

  addResource(def: ResourceDefinition, notify = true): void {
    if (this.resources.has(def.uri)) throw new Error(`resource "${def.uri}" is registered twice`);
    this.resources.set(def.uri, def);
    if (notify) this.events.emit('resourcesListChanged');
  }

  addTemplate(def: ResourceTemplateDefinition, notify = true): void {
    this.templates.set(def.uriTemplate, def);
    if (notify) this.events.emit('resourcesListChanged');
  }

  /** The run-time control handed to handlers. */
  control(): ServerControl {
    const events: Record<'tools' | 'prompts' | 'resources', RegistryEvent> = {
      tools: 'toolsListChanged',
      prompts: 'promptsListChanged',
      resources: 'resourcesListChanged',
    };
    return {
      addTool: (tool) => this.addTool(tool),
      removeTool: (name) => this.removeTool(name),
      addPrompt: (prompt) => this.addPrompt(prompt),
      removePrompt: (name) => this.removePrompt(name),
      listChanged: (kind) => this.events.emit(events[kind]),
      resourceUpdated: (uri) => this.resourceUpdated(uri),
    };
  }

  /** Tells listeners subscribed to this resource that its contents changed. */
  resourceUpdated(uri: string): void {
    this.events.emit('resourceUpdated', uri);
  }
}
