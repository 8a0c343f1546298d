// Resolves `--tools` into tool sets: built-in names or paths to modules exporting tools.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolSet } from '../protocol/define.js';
import { UsageError } from './args.js';

const BUILT_IN: Record<string, string> = {
  demo: '../../examples/demo/index.js',
  conformance: '../../examples/conformance/index.js',
};

function toToolSet(mod: Record<string, unknown>, source: string): ToolSet {
  const candidate = (mod.default ?? mod) as ToolSet;
  const set: ToolSet = {
    tools: candidate.tools ?? [],
    prompts: candidate.prompts ?? [],
    resources: candidate.resources ?? [],
    resourceTemplates: candidate.resourceTemplates ?? [],
  };
  const total = (set.tools?.length ?? 0) + (set.prompts?.length ?? 0) + (set.resources?.length ?? 0);
  if (total + (set.resourceTemplates?.length ?? 0) === 0) {
    throw new UsageError(`--tools ${source}: the module exports no tools, prompts or resources`);
  }
  return set;
}

export async function loadToolSets(spec: string): Promise<ToolSet[]> {
  const sets: ToolSet[] = [];
  for (const item of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const builtIn = BUILT_IN[item];
    const url =
      builtIn !== undefined ? new URL(builtIn, import.meta.url).href : pathToFileURL(resolve(item)).href;
    let mod: Record<string, unknown>;
    try {
      mod = (await import(url)) as Record<string, unknown>;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new UsageError(
        `--tools ${item}: cannot load (${why}); built-in sets are ${Object.keys(BUILT_IN).join(', ')}`,
      );
    }
    sets.push(toToolSet(mod, item));
  }
  return sets;
}
