// How tools/list looks per request: clients that declare the tasks extension see the tools as registered, the
// others see the facade tools and output schemas that also admit a hand-back.
import { hasExtension } from '../../wire/envelope.js';
import { TASKS_EXTENSION } from '../../wire/meta-keys.js';
import type { ToolDefinition } from '../define.js';
import type { RegisteredTool } from '../registry.js';
import type { RequestScope } from '../scope.js';
import type { ToolsView } from '../server.js';
import type { JsonObject } from '../types.js';
import { toolBudget, withHandle, type Fallback } from './fallback.js';

/** The view of tools/list a request sees; undefined (the registered listing) when there is no facade. */
export function tasksToolsView(
  facade: ToolDefinition<never>[],
  fallback: Fallback,
): (scope: RequestScope) => ToolsView | undefined {
  const facadeNames = new Set(facade.map((t) => t.name));
  // The listing a tool shows clients without the extension: its outputSchema also admits a hand-back.
  const widened = new WeakMap<RegisteredTool, JsonObject>();
  const fallbackListing = (tool: RegisteredTool): JsonObject => {
    const schema = tool.def.outputSchema;
    if (schema === undefined || toolBudget(tool.def.task, fallback) === undefined) return tool.listing;
    let listing = widened.get(tool);
    if (listing === undefined) {
      listing = { ...tool.listing, outputSchema: withHandle(schema) };
      widened.set(tool, listing);
    }
    return listing;
  };

  /** Clients that declare the extension see the tools as registered, without the facade. */
  const awareView: ToolsView = {
    key: 'tasks',
    list: (tools) => tools.flatMap((t) => (facadeNames.has(t.def.name) ? [] : [t.listing])),
  };
  /** The others see the facade (while some tool hands tasks back) and widened output schemas. */
  const fallbackView: ToolsView = {
    key: 'fallback',
    list(tools) {
      const handing = tools.some((t) => toolBudget(t.def.task, fallback) !== undefined);
      return tools.flatMap((t) => (!handing && facadeNames.has(t.def.name) ? [] : [fallbackListing(t)]));
    },
  };

  return (scope) =>
    facade.length === 0
      ? undefined
      : hasExtension(scope.envelope.clientCapabilities, TASKS_EXTENSION)
        ? awareView
        : fallbackView;
}
