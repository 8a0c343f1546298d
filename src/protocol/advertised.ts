// Which gated capabilities server/discover advertises (and so which gated methods answer): those something is
// registered for, or an extension's resource provider serves.
import type { GatingCapability } from '../wire/method-traits.js';
import type { Registry } from './registry.js';

const hasCompletions = (registry: Registry): boolean =>
  [...registry.prompts.values()].some((p) => p.complete !== undefined) ||
  [...registry.templates.values()].some((t) => t.complete !== undefined);

/** Whether server/discover advertises `capability`: something is registered for it (`providers`: resource providers). */
export function advertises(registry: Registry, capability: GatingCapability, providers: number): boolean {
  switch (capability) {
    case 'prompts':
      return registry.prompts.size > 0;
    case 'resources':
      return registry.resources.size > 0 || registry.templates.size > 0 || providers > 0;
    case 'completions':
      return hasCompletions(registry);
  }
}
