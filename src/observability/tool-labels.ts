// The `tool` label of the metrics: one value per tool the server serves (at most MAX_TOOL_LABELS), "other" for the
// rest, so that a removed tool's tasks, a typo or a huge registry cannot grow the number of series without bound.

/** Distinct `tool` label values at most (the "other" bucket aside). */
export const MAX_TOOL_LABELS = 100;

/** The label value of tools that get no label of their own. */
export const OTHER_TOOL = 'other';

export interface ToolLabelOptions {
  /**
   * The tools the server serves (its registry): only these get a label of their own, the first `max` of them in
   * this order. Without it, the first `max` distinct names seen get one.
   */
  tools?: Iterable<string>;
  /** Default MAX_TOOL_LABELS. */
  max?: number;
}

/** Maps a tool name to its label value: the name itself, or "other". A Set lookup per call. */
export function createToolLabels(options: ToolLabelOptions = {}): (tool: string | undefined) => string {
  const max = Math.max(0, options.max ?? MAX_TOOL_LABELS);
  const labelled = new Set<string>();
  if (options.tools !== undefined) {
    for (const tool of options.tools) {
      if (labelled.size >= max) break;
      labelled.add(tool);
    }
    return (tool) => (tool !== undefined && labelled.has(tool) ? tool : OTHER_TOOL);
  }
  return (tool) => {
    if (tool === undefined) return OTHER_TOOL;
    if (labelled.has(tool)) return tool;
    if (labelled.size >= max) return OTHER_TOOL;
    labelled.add(tool);
    return tool;
  };
}
