// The demo tool set (`serve --tools demo`, examples/demo) as tools/list shows each tool: what the stateless rows
// expect our server and the SDK peer to list, and what the peer registers (bench/children/sdk-peer.ts).
import type { ToolSet } from 'durable-mcp';
import demo from '../../examples/demo/index.js';

/** One tool as tools/list shows it (the fields the peer registers too). */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** The tools of `set` (the demo's by default) as tools/list shows them: without an input schema, an empty object's. */
export function listedTools(set: ToolSet = demo): ListedTool[] {
  return (set.tools ?? []).map((tool) => ({
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    ...(tool.description === undefined ? {} : { description: tool.description }),
    inputSchema: tool.inputSchema ?? { type: 'object' },
    ...(tool.outputSchema === undefined ? {} : { outputSchema: tool.outputSchema }),
    ...(tool.annotations === undefined ? {} : { annotations: { ...tool.annotations } }),
  }));
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Whether `listed` (a tools/list result's `tools`) holds exactly the `expected` tools, each with its input schema:
 * the problem, or undefined.
 */
export function toolListProblem(listed: unknown, expected: ListedTool[]): string | undefined {
  const tools = Array.isArray(listed) ? (listed as Array<Partial<ListedTool>>) : [];
  const names = tools.map((t) => String(t.name)).sort();
  const wanted = expected.map((t) => t.name).sort();
  if (!sameJson(names, wanted)) {
    return `expected the tools ${wanted.join(', ')} (the demo's), got ${names.join(', ') || 'none'}`;
  }
  for (const tool of expected) {
    const got = tools.find((t) => t.name === tool.name)!;
    if (!sameJson(got.inputSchema, tool.inputSchema)) {
      return `${tool.name}'s input schema differs from the demo's: ${JSON.stringify(got.inputSchema)}`;
    }
  }
  return undefined;
}
